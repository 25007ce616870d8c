package mpicheck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The real MPICH runs each of its candidates at 2 ranks, and the k values
// of the trees (tried from 4 ranks on) too, or refuses them the way Run
// reports: on MPICH 4.0 the k_dissemination and recexch barriers (4.1 and
// later) are refused (their k CVARs are unknown to it), every other
// candidate runs.
func TestMPICHAcceptsCandidates(t *testing.T) {
	p := built(t, Implementations()[1])
	if _, err := p.Run(context.Background(), Sample{Ranks: 2, Seconds: 0.01, Chunk: 0.002, MaxBarriers: 5000, Limit: 30 * time.Second}); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	cands := Candidates(MPICH, 2)
	for _, c := range Candidates(MPICH, 8) {
		if strings.Contains(c, "INTRANODE_TREE_KVAL") {
			cands = append(cands, c)
		}
	}
	// A CVAR this MPICH lacks (4.0 has no DISSEM_KVAL) is refused, not
	// ignored.
	if _, err := p.Run(context.Background(), Sample{Ranks: 2, Seconds: 0.01, Env: []string{"MPIR_CVAR_NO_SUCH_CVAR=2"}, Limit: 30 * time.Second}); !errors.Is(err, ErrRefused) {
		t.Errorf("an unknown CVAR: %v, want ErrRefused", err)
	}
	for _, c := range cands {
		_, err := p.Run(context.Background(), Sample{Ranks: 2, Seconds: 0.01, Chunk: 0.002, MaxBarriers: 5000, Env: SettingEnv(c), Limit: 30 * time.Second})
		newer := strings.Contains(c, "k_dissemination") || strings.Contains(c, "recexch")
		v40 := strings.Contains(p.Version, "Version:") && strings.Contains(p.Version, "4.0.")
		switch {
		case newer && v40:
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "KVAL") {
				t.Errorf("%s on %s: %v, want a refusal naming the CVAR", c, p.Version, err)
			}
		case err != nil:
			t.Errorf("%s on %s: %v", c, p.Version, err)
		}
	}
}
