//go:build cmatrix

package export

// fullMatrix is true under -tags cmatrix (.ci/run): every compiler,
// sanitizer and case of the C and C++ tests (see matrix_off_test.go).
const fullMatrix = true
