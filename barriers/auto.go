package barriers

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/barriertune/barriertune/cpuset"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/internal/osal"
	"github.com/barriertune/barriertune/results"
)

// Tuning is what the install-time check chose for n participants, or the
// documented fallback.
type Tuning struct {
	// Threads is the participant count asked for.
	Threads int
	// Algorithm is a catalog name, and Policy the waiting policy the check
	// measured it with ("" for the fallback). Policy is a record, not what
	// New and Auto build with: they use AutoPolicy unless an option
	// (WithPolicy) chooses another.
	Algorithm string
	Policy    string
	// CPUs is the chosen placement inside this process's allowed CPUs (OS
	// CPU of each rank; round-robin when the participants outnumber them);
	// nil for the fallback.
	CPUs []int
	// MedianNs is the measured ns per episode of this placement class (0
	// for the fallback, or when Rule is not results.Measured).
	MedianNs float64
	// Source is the results file used, or "" for the fallback; Skipped
	// lists the files of the lookup order tried before it, each with why it
	// was not used ("path: reason").
	Source  string
	Skipped []string
	// Rule is the selection rule (results.Measured, RuleNearest,
	// RuleOversubscribed) and Why says it for people.
	Rule string
	Why  string
	// Fallback says why the fallback was used ("" when tuned).
	Fallback string
	// Warning says how the machine differs from the one the forced
	// results were recorded on (see results.ForceEnv).
	Warning string
	// FanIn is the tree fan-in the check measured (0: the default).
	FanIn int
	// Composition is the tuned hybrid's composition, as recorded, and
	// Levels its levels with their groups for Threads participants; New
	// builds the hybrid with WithHierarchy(Levels).
	Composition string
	Levels      Hierarchy
	// BlockWake is the block and wake-up cost the check recorded in the
	// results file (block_wake_ns), which AutoPolicy's spin bound for
	// locked threads starts from; 0 when the file records none (AutoPolicy
	// then estimates it in-process when it first needs it).
	BlockWake time.Duration
}

// fallbackAlgorithm is used when no results apply: dissemination, the
// fewest sequential steps, when the participants fit the CPUs; goroutine
// (a lock-free arrival counter, one yield before parking) when
// they outnumber GOMAXPROCS. Both measured best or near-best in those
// regimes on the machines we tried (docs/algorithms.md).
func fallbackAlgorithm(n int) string {
	if osal.Oversubscribed(n) {
		return algname.Oversubscribed
	}
	return algname.Fallback
}

// Tuned returns the tuned choice for n participants. The results file is
// this machine's (results.FindHere), the first of results.Finder's lookup
// order that applies to it:
//
//  1. $BARRIERTUNE_RESULTS, a file (or, ending in a slash, a directory
//     of machines' files);
//  2. the per-user directory, $XDG_CONFIG_HOME/barriertune/ (else
//     ~/.config/barriertune/): results.json, then its other *.json files;
//  3. the system-wide directory /etc/barriertune/, in the same order;
//  4. barriertune/ in each absolute directory of $XDG_CONFIG_DIRS, in its
//     order, the same way (a site's directory shared by many nodes, one
//     file per kind of node).
//
// Files recorded on another machine (CPU or tree), simulated, or
// unreadable are skipped with their reasons (Tuning.Skipped). The choice is
// results.Selector.Select for n inside the CPUs this process runs at once
// (its allowed CPUs: the process's, those it started with that its
// threads may still run on, never the calling thread's alone, so a main
// thread pinned to one CPU before the call gets the choice an unpinned
// one gets; the first k of them where its cgroup's CPU quota or
// GOMAXPROCS allows only k, so that more participants than k take the
// oversubscribed rule, as without a file), the rule `barriertune show --threads` and
// `export` apply: the fastest measured placement class that fits the
// allowed CPUs, else the nearest measured count's algorithm packed on them,
// round-robin when n outnumbers them (Tuning.Rule). With no file that
// applies, it returns the fallback with the reason.
//
// A tuned hybrid is built with the composition and groups the check
// measured (Tuning.Levels) when the choice is its measured placement class;
// elsewhere its runner-up stands in.
//
// The lookup, the file and this machine's fingerprint are read once per
// process (once per value of the lookup's environment variables) and
// cached: later calls cost a selection.
//
// The fingerprint is light: CPU identity (CPUID), the online and allowed
// CPU sets, no CPU-tree discovery. The tree the check recorded is
// trusted; `barriertune show` compares it with the live one.
func Tuned(n int) Tuning {
	return tuning(cache.load(), n)
}

// resultsCache is the one package-level mutable state: the lookup Tuned
// made, per lookup order.
type resultsCache struct {
	mu     sync.Mutex
	loaded *loaded
}

// loaded is one lookup of a results file with this machine's allowed CPUs
// (found.Allowed).
type loaded struct {
	key   string // the environment the lookup read
	found *results.Found
	sel   *results.Selector
	err   error // no file applies, or fingerprinting failed
}

var cache resultsCache

func (c *resultsCache) load() *loaded {
	// The lookup depends on these variables only (os.UserConfigDir reads
	// XDG_CONFIG_HOME, then HOME; the site's files XDG_CONFIG_DIRS): a
	// later call costs five Getenvs.
	key := strings.Join([]string{os.Getenv(results.ResultsEnv), os.Getenv(results.ForceEnv), os.Getenv("XDG_CONFIG_HOME"), os.Getenv("HOME"),
		os.Getenv("XDG_CONFIG_DIRS")}, "\x00")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded == nil || c.loaded.key != key {
		c.loaded = prepare(results.FindHere())
		c.loaded.key = key
	}
	return c.loaded
}

// prepare makes a lookup's file ready for selections.
func prepare(found *results.Found, err error) *loaded {
	l := &loaded{found: found, err: err}
	if l.err != nil {
		return l
	}
	l.sel, l.err = l.found.File.Selector()
	if l.err != nil {
		l.err = fmt.Errorf("%s: %w", l.found.Path, l.err)
	}
	return l
}

// TunedFrom is Tuned with an explicit results file (the only one tried;
// a directory's *.json files when path ends in a slash), read on every
// call (no cache).
func TunedFrom(path string, n int) Tuning {
	fd, err := results.HereFinder()
	if err != nil {
		return fallback(n, err.Error())
	}
	return tuning(prepare(fd.Only(path).Find()), n)
}

func tuning(l *loaded, n int) Tuning {
	if l.err != nil {
		return fallback(n, l.err.Error())
	}
	path := l.found.Path
	allowed := l.found.Allowed
	if l.found.Warning != "" {
		// Forced onto another machine: select inside what it shares with
		// this one, else on its whole tree.
		if allowed = allowed.And(l.sel.CPUs()); l.sel.CheckAllowed(allowed) != nil {
			allowed = l.sel.CPUs()
		}
	}
	sel, err := selectAtOnce(l.sel, n, allowed)
	if err != nil {
		return fallback(n, fmt.Sprintf("%s: %v", path, err))
	}
	if _, err := Lookup(sel.Algorithm); err != nil {
		return fallback(n, fmt.Sprintf("%s names %v", path, err))
	}
	if sel.FanIn < 0 || sel.FanIn == 1 {
		return fallback(n, fmt.Sprintf("%s: %d threads: fan-in %d (want 0 for the default, or 2 or more)", path, sel.From, sel.FanIn))
	}
	t := Tuning{Threads: n, Algorithm: sel.Algorithm, Policy: sel.Policy, CPUs: sel.CPUs, MedianNs: sel.MedianNs, Source: path,
		Rule: sel.Rule, Why: sel.Why, FanIn: sel.FanIn, Warning: l.found.Warning}
	if l.found.File.BlockWakeNs > 0 {
		t.BlockWake = time.Duration(l.found.File.BlockWakeNs)
	}
	for _, k := range l.found.Skipped {
		t.Skipped = append(t.Skipped, k.Path+": "+k.Reason)
	}
	if sel.Algorithm == algname.Hybrid && sel.Composition != "" {
		levels, err := tunedLevels(sel.Composition, sel.LevelKeys, n)
		if err != nil {
			return fallback(n, fmt.Sprintf("%s, %d threads: %v", path, n, err))
		}
		t.Composition, t.Levels = sel.Composition, levels
	}
	return t
}

// selectAtOnce selects for n inside the part of allowed this process runs
// at once (osal.AtOnce: its cgroup's CPU quota and GOMAXPROCS), or inside
// allowed where the file cannot select inside that part (a file without
// its machine's tree selects on its check's CPUs only).
func selectAtOnce(sel *results.Selector, n int, allowed cpuset.Set) (results.Selection, error) {
	if at := osal.AtOnce(allowed); !at.Equal(allowed) {
		if s, err := sel.Select(n, at); err == nil {
			return s, nil
		}
	}
	return sel.Select(n, allowed)
}

// tunedLevels rebuilds a recorded hybrid's levels for n participants: the
// composition string with the level keys (Hierarchy.Grouped); a one-level
// composition needs none.
func tunedLevels(composition string, keys [][]int, n int) (Hierarchy, error) {
	specs, err := ParseHierarchy(composition)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 && len(specs) == 1 {
		keys = [][]int{make([]int, n)}
	}
	for l, row := range keys {
		if len(row) != n {
			return nil, fmt.Errorf("hybrid %s: level_keys row %d has %d entries, want %d (one per participant)", composition, l, len(row), n)
		}
	}
	levels, err := Hierarchy(specs).Grouped(keys)
	if err != nil {
		return nil, fmt.Errorf("hybrid %s: %w", composition, err)
	}
	if err := validateLevels(levels, n); err != nil {
		return nil, fmt.Errorf("hybrid %s: %w", composition, err)
	}
	return levels, nil
}

func fallback(n int, why string) Tuning {
	return Tuning{Threads: n, Algorithm: fallbackAlgorithm(n), Fallback: why}
}

// recordedBlockWake returns the block and wake-up cost the check recorded
// in the results file Tuned reads (results.File.BlockWakeNs), or 0 when
// there is none or the file is for another machine. AutoPolicy's spin
// bound starts from it (blockWakeCost).
func recordedBlockWake() time.Duration {
	l := cache.load()
	if l.err != nil || l.found == nil || l.found.File == nil || l.found.File.BlockWakeNs <= 0 {
		return 0
	}
	return time.Duration(l.found.File.BlockWakeNs)
}

// Auto returns a barrier for n participants using the tuned algorithm
// (see Tuned), with AutoPolicy unless opts choose another, whatever policy
// the results file says the check measured with (spin, on pinned CPUs):
// AutoPolicy spins as fast as Spin while every participant has a CPU, and
// blocks after a bounded spin when one does not (a busy machine, more
// participants than CPUs), so it is safe for goroutines that are not
// pinned. Ask for Spin (WithPolicy) only for a team pinned on CPUs that
// nothing else uses. Use Tuning.Team to run pinned on the tuned placement.
func Auto(n int, opts ...Option) (Barrier, error) {
	return Tuned(n).New(opts...)
}

// New constructs the tuned barrier: with the tuned fan-in and a hybrid's
// levels, unless opts choose others.
func (t Tuning) New(opts ...Option) (Barrier, error) {
	var tuned []Option
	if t.FanIn > 0 {
		tuned = append(tuned, WithFanIn(t.FanIn))
	}
	if len(t.Levels) > 0 {
		tuned = append(tuned, WithHierarchy(t.Levels))
	}
	return New(t.Algorithm, t.Threads, append(tuned, opts...)...)
}

// Team returns a team to run the participants on: pinned locked threads on
// the tuned CPUs when the selection gave a CPU of its own to each
// participant and they are allowed here, else plain goroutines (as the
// check runs more participants than CPUs).
func (t Tuning) Team() (*Team, error) {
	if len(t.CPUs) == t.Threads && t.Threads > 0 && cpuset.Of(t.CPUs...).Len() == t.Threads {
		if team, err := osal.NewTeam(t.CPUs); err == nil {
			return &Team{team}, nil
		}
	}
	team, err := osal.NewUnpinnedTeam(t.Threads)
	if err != nil {
		return nil, err
	}
	return &Team{team}, nil
}
