package mpicheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/child"
)

// MPICH's barrier settings. A setting is one or more CVAR assignments
// joined by commas (NAME=VALUE[,NAME=VALUE...]): a k value is tried with
// the algorithm that reads it, since alone it changes nothing (or, where
// the version lacks the algorithm, MPICH refuses the pair at MPI_Init:
// "Invalid MPIR_CVAR_BARRIER_INTRA_ALGORITHM value", where it would ignore
// an unknown CVAR name without a word).
//
// What MPICH has, from its sources (src/mpi/coll/cvars.txt,
// coll_algorithms.txt and ch4's release_gather.c, tags v4.0.2 and v4.1):
//   - 4.0 and later: MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM (mpir,
//     release_gather) and MPIR_CVAR_BARRIER_INTRA_ALGORITHM (nb, smp,
//     dissemination), read by MPI_Barrier only. ch4 runs a barrier as
//     one among the node's ranks (its shared-memory code, whose default,
//     its posix_generic.json, is release_gather), one among the nodes'
//     leaders and a release; the MPIR algorithms run among the node's
//     ranks only under POSIX=mpir, so they are tried with it (alone they
//     reach the leaders' barrier, of one rank on one node: forced smp,
//     which needs a communicator with a node hierarchy, makes
//     MPIR_Barrier_impl fail there under MPIR_CVAR_COLLECTIVE_FALLBACK=error
//     even with POSIX=release_gather). The node's release_gather
//     barrier gathers up one tree and releases down another, built once
//     per communicator with MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL (default
//     4) and MPIR_CVAR_BCAST_INTRANODE_TREE_KVAL (default 64): these two
//     are shared, the same trees carry MPI_Bcast, MPI_Reduce and
//     MPI_Allreduce on the node (MPICHAlsoChanges says so, and the export
//     writes it). 4.0's MPIR_CVAR_IBARRIER_RECEXCH_KVAL is read by no
//     algorithm it can select (its ibarrier algorithms are auto,
//     sched_auto and sched_recursive_doubling): not tried.
//   - 4.1 and later: MPIR_CVAR_BARRIER_INTRA_ALGORITHM=k_dissemination
//     with MPIR_CVAR_BARRIER_DISSEM_KVAL, and =recexch with
//     MPIR_CVAR_BARRIER_RECEXCH_KVAL, read by MPI_Barrier only.

// The CVARs of MPICH's barrier settings.
const (
	mpichIntra       = "MPIR_CVAR_BARRIER_INTRA_ALGORITHM"
	mpichPosix       = "MPIR_CVAR_BARRIER_POSIX_INTRA_ALGORITHM"
	mpichGatherK     = "MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL"
	mpichReleaseK    = "MPIR_CVAR_BCAST_INTRANODE_TREE_KVAL"
	mpichDissemK     = "MPIR_CVAR_BARRIER_DISSEM_KVAL"
	mpichRecexchK    = "MPIR_CVAR_BARRIER_RECEXCH_KVAL"
	mpichGatherKDef  = 4
	mpichReleaseKDef = 64
)

// mpichKs are the k values tried.
var mpichKs = []int{2, 3, 4, 8}

// mpichShared are the shared CVARs a setting may write, with what else
// they change.
var mpichShared = map[string]string{
	mpichGatherK:  "the gather tree of the node's release_gather collectives: also MPI_Reduce and MPI_Allreduce within the node",
	mpichReleaseK: "the release tree of the node's release_gather collectives: also MPI_Bcast and MPI_Allreduce within the node",
}

// MPICHAlsoChanges says what else an MPICH CVAR changes besides
// MPI_Barrier, "" for one read by MPI_Barrier only.
func MPICHAlsoChanges(name string) string { return mpichShared[name] }

// SettingEnv is a setting's assignments (NAME=VALUE, the commas split),
// nil for the defaults ("").
func SettingEnv(setting string) []string {
	if setting == "" {
		return nil
	}
	return strings.Split(setting, ",")
}

// mpichCandidates are MPICH's settings at n ranks: the algorithms, then
// the k values that make a tree or a round structure of their own at n
// ranks. A k-ary tree of n ranks is flat for every k from n-1 up, so
// only k values whose min(k, n-1) differs from the default's and from
// each other's are tried; a k-way dissemination or recursive exchange
// of n ranks is one round for every k from n up (min(k, n)).
func mpichCandidates(n int) []string {
	mpir := mpichPosix + "=mpir,"
	out := []string{
		mpichPosix + "=mpir", mpichPosix + "=release_gather",
		mpir + mpichIntra + "=nb", mpir + mpichIntra + "=smp", mpir + mpichIntra + "=dissemination",
	}
	tree := func(name string, def int) {
		seen := []int{min(def, n-1)}
		for _, k := range mpichKs {
			if e := min(k, n-1); !slices.Contains(seen, e) {
				seen = append(seen, e)
				out = append(out, fmt.Sprintf("%s=release_gather,%s=%d", mpichPosix, name, k))
			}
		}
	}
	tree(mpichGatherK, mpichGatherKDef)
	tree(mpichReleaseK, mpichReleaseKDef)
	rounds := func(alg, name string) {
		var seen []int
		for _, k := range mpichKs {
			if e := min(k, n); !slices.Contains(seen, e) {
				seen = append(seen, e)
				out = append(out, fmt.Sprintf("%s%s=%s,%s=%d", mpir, mpichIntra, alg, name, k))
			}
		}
	}
	rounds("k_dissemination", mpichDissemK)
	rounds("recexch", mpichRecexchK)
	return out
}

// refusedCVAR is MPICH's refusal of a CVAR's value on stderr (its launch
// aborts in MPI_Init: "Invalid MPIR_CVAR_... value (X)" or "Invalid
// character ... in MPIR_CVAR_..."), or "".
func (p *Program) refusedCVAR(stderr string) string {
	if p.Name != MPICH {
		return ""
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "Invalid") && strings.Contains(l, "MPIR_CVAR_") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// checkCVARs refuses env (ErrRefused) when it assigns an MPIR_CVAR_ this
// MPICH does not have: MPICH ignores such a variable without a word, and
// the setting would be timed as the defaults. The names are asked once,
// with every candidate's, through the loop's cvars mode (one rank, under
// probeTimeout); a name the answer does not cover is let through.
func (p *Program) checkCVARs(ctx context.Context, env []string) error {
	if p.Name != MPICH {
		return nil
	}
	var names, ask []string
	for _, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(name, "MPIR_CVAR_") {
			names = append(names, name)
			if _, known := p.cvars[name]; !known && !slices.Contains(ask, name) {
				ask = append(ask, name)
			}
		}
	}
	if len(ask) > 0 {
		if p.cvars == nil {
			p.cvars = map[string]bool{}
			for _, c := range mpichCandidates(1 << 10) {
				for _, kv := range SettingEnv(c) {
					if name, _, _ := strings.Cut(kv, "="); !slices.Contains(ask, name) {
						ask = append(ask, name)
					}
				}
			}
		}
		c, cancel := context.WithTimeout(ctx, probeTimeout)
		out, err := child.Run(c, p.env(nil), p.Launcher, append(append(p.launchArgs(1, nil), p.Path, "cvars"), ask...)...)
		cancel()
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		for _, l := range strings.Split(string(out.Stdout), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "cvar" && slices.Contains(ask, f[1]) {
				p.cvars[f[1]] = f[2] == "yes"
			}
		}
		for _, name := range ask {
			if _, ok := p.cvars[name]; !ok {
				p.cvars[name] = true // not answered: let through
			}
		}
	}
	for _, name := range names {
		if !p.cvars[name] {
			v := p.Version
			if v == "" {
				v = "this MPICH"
			}
			return fmt.Errorf("%w: %s has no %s (MPI_T_cvar_get_index; it would ignore the variable)", ErrRefused, v, name)
		}
	}
	return nil
}
