// Package libtest holds the tests of the public library
// packages (barriers, results) that need the tuner's packages: measure
// (golang.org/x/perf), check and configsets.
//
// They live here, not beside the packages they test, because `go mod
// tidy` in a module that imports barriers loads the tests of barriers and
// results too (so that `go test all` works there) and downloads every
// module their imports need: with these tests in barriers and results, a
// library user's tidy fetched ghw, pcidb, yaml, plist, wmi, go-ole and
// x/perf. What such a user downloads now is x/sys, cpuid and
// marusama/cyclicbarrier (one small module without dependencies, which
// barriers' BenchmarkPeers compares against); TestLibraryUserDownloads
// keeps it so.
package libtest
