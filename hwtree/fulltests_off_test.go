//go:build !fulltests

package hwtree

// fullTests is false in the quick run (go test ./...): the corpus's lstopo
// round trips run on every eighth machine and the XML cap on 80,000 PUs;
// .ci/run runs them all with -tags fulltests (and the XML object cap).
const fullTests = false
