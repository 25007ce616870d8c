#!/bin/sh
# Runs the stencil benchmark (barriers/stencil_bench_test.go,
# TestStencilTable): a 1D Jacobi stencil with one barrier per step, fine
# (256 cells per participant) at 2 participants and at GOMAXPROCS, coarse
# (65536 cells), oversubscribed (4 x GOMAXPROCS participants) and pinned,
# with Auto, Spin, the old Auto (Yield, 2^16 relax hints), the textbook
# sync.Cond, channel and WaitGroup barriers and spawn-per-step; quiet and
# with as many CPU-bound hog processes as CPUs (started and killed by pid
# by the test itself; each also exits on its own within a minute).
# Prints one table: median and worst run of each cell, in ns per step.
#
#   cmd/scripts/stencil.sh              # 7 runs per cell, a few minutes
#   RUNS=3 HOGS=2 cmd/scripts/stencil.sh
set -eu
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/barriers.test" ./barriers
BARRIERTUNE_STENCIL=1 BARRIERTUNE_STENCIL_RUNS="${RUNS:-7}" BARRIERTUNE_STENCIL_HOGS="${HOGS:-$(nproc)}" \
	"$bin/barriers.test" -test.run '^TestStencilTable$' -test.v -test.timeout 30m | grep -v -e '^=== RUN' -e '^--- ' -e '^PASS' -e '^ok'
