// Package spin holds the low-level memory operations the barriers' hot
// paths need and the standard library lacks.
package spin
