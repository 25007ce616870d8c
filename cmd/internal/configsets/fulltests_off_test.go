//go:build !fulltests

package configsets

// fullTests is false in the quick run (go test ./...): the brute-force
// comparison takes 40 random trees besides the fixed ones; .ci/run takes
// 120 with -tags fulltests.
const fullTests = false
