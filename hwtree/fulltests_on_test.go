//go:build fulltests

package hwtree

// fullTests is set by -tags fulltests (.ci/run): the slow variants run,
// every corpus machine's lstopo round trips and the 600,000-PU refusal.
const fullTests = true
