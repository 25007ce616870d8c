//go:build !cmatrix

package export

// fullMatrix is false in the README's `go test ./...`: the C and C++
// tests build each program with one compiler and one configuration
// (gcc, g++), enough to catch a broken header in seconds. .ci/run runs
// the whole matrix (both compilers of each language, the sanitizers,
// every NUMA case, std::barrier's own check) with -tags cmatrix.
const fullMatrix = false
