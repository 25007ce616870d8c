//go:build fulltests

package configsets

// fullTests is true under -tags fulltests (.ci/run): see
// fulltests_off_test.go.
const fullTests = true
