package barriers

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/barriertune/barriertune/osal"
	"github.com/barriertune/barriertune/results"
)

// ResultsEnv names the environment variable that points Auto and Tuned at
// a results file; without it they read results.DefaultPath().
const ResultsEnv = "BARRIERTUNE_RESULTS"

// ForceEnv names the environment variable that, set to 1, makes Auto and
// Tuned use a results file recorded on a different machine (say, the same
// hardware with another allowed CPU set); Tuning.Warning then says how it
// differs.
const ForceEnv = "BARRIERTUNE_FORCE"

// Tuning is what the install-time check chose for n participants, or the
// documented fallback.
type Tuning struct {
	// Threads is the participant count asked for.
	Threads int
	// Algorithm is a catalog name.
	Algorithm string
	// CPUs is the winning placement (OS CPU of each rank) when the results
	// hold one for exactly Threads participants; nil otherwise.
	CPUs []int
	// MedianNs is the measured ns per episode (0 for the fallback).
	MedianNs float64
	// Source is the results file used, or "" for the fallback.
	Source string
	// Fallback says why the fallback was used ("" when tuned).
	Fallback string
	// Warning says how the machine differs from the one the forced
	// results were recorded on (see ForceEnv).
	Warning string
	// FanIn is the tree fan-in the check measured (0: the default).
	FanIn int
	// Composition is the tuned hybrid's composition, as recorded, and
	// Levels its levels with their groups for Threads participants; New
	// builds the hybrid with WithHierarchy(Levels).
	Composition string
	Levels      []Level
}

// fallbackAlgorithm is used when no results apply: dissemination, the
// fewest sequential steps, when the participants fit the CPUs; goroutine
// (a lock-free arrival counter, one yield before parking) when
// they outnumber GOMAXPROCS. Both measured best or near-best in those
// regimes on the machines we tried (docs/algorithms.md).
func fallbackAlgorithm(n int) string {
	if oversubscribed(n) {
		return "goroutine"
	}
	return "dissemination"
}

// Tuned returns the tuned choice for n participants from the results file
// named by $BARRIERTUNE_RESULTS, else results.DefaultPath(). It uses the
// entry for n, else the nearest measured thread count (its algorithm
// only, not its CPUs). When there is no file, the file is unreadable, or it
// was recorded on a different machine (another CPU, CPU tree or allowed CPU
// set; unless $BARRIERTUNE_FORCE=1), it returns the fallback with the
// reason.
//
// A tuned hybrid is built with the composition and groups the check
// measured (Tuning.Levels) when the file holds them for exactly n; its
// groups do not fit another count, so there the entry's runner-up (the
// best other algorithm) is used, or the fallback when it has none.
//
// The file and this machine's fingerprint are read once per process and
// cached (per path): later calls cost a lookup. Reload drops the cache,
// for a process that reran the check or changed its CPU affinity.
//
// The fingerprint is light: CPU identity (CPUID) and the allowed CPU set,
// no CPU-tree discovery. The tree digest the check recorded
// (Machine.TopologyHash) is trusted; `barriertune show` compares it.
func Tuned(n int) Tuning {
	path := os.Getenv(ResultsEnv)
	if path == "" {
		p, err := results.DefaultPath()
		if err != nil {
			return fallback(n, err.Error())
		}
		path = p
	}
	return tuning(cache.load(path), n)
}

// Reload drops the results Tuned and Auto cached, so the next call reads
// the file and fingerprints the machine again.
func Reload() { cache.reset() }

// resultsCache is the one package-level mutable state: the results file
// and fingerprint Tuned read, per path, until Reload.
type resultsCache struct {
	mu     sync.Mutex
	loaded *loaded
}

// loaded is one read of a results file with this machine's fingerprint.
type loaded struct {
	path string
	file *results.File
	err  error // reading the file or fingerprinting the machine
	why  string
}

var cache resultsCache

func (c *resultsCache) load(path string) *loaded {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded == nil || c.loaded.path != path {
		c.loaded = read(path)
	}
	return c.loaded
}

func (c *resultsCache) reset() {
	c.mu.Lock()
	c.loaded = nil
	c.mu.Unlock()
}

// read loads path and compares its machine with this one.
func read(path string) *loaded {
	l := &loaded{path: path}
	l.file, l.err = results.Read(path)
	if l.err != nil {
		return l
	}
	allowed, err := osal.Allowed()
	if err != nil {
		l.err = fmt.Errorf("cannot fingerprint this machine: %w", err)
		return l
	}
	l.why = l.file.Machine.Mismatch(results.Host(allowed.String()))
	return l
}

// TunedFrom is Tuned with an explicit results file, read on every call
// (no cache).
func TunedFrom(path string, n int) Tuning {
	return tuning(read(path), n)
}

func tuning(l *loaded, n int) Tuning {
	path, f, why := l.path, l.file, l.why
	if err := l.err; err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fallback(n, fmt.Sprintf("no results file at %s (run `barriertune check`)", path))
		}
		return fallback(n, err.Error())
	}
	if why != "" && os.Getenv(ForceEnv) != "1" {
		return fallback(n, fmt.Sprintf("%s was recorded on another machine: %s (set %s=1 to use it anyway)", path, why, ForceEnv))
	}
	entry := f.Nearest(n)
	if entry == nil {
		return fallback(n, path+" holds no winner")
	}
	if entry.Threads != n && oversubscribed(n) {
		// The check measures threads that fit the CPUs; more goroutines
		// than GOMAXPROCS are a different regime, not the nearest count's.
		return fallback(n, fmt.Sprintf("%s has no entry for %d participants, more than GOMAXPROCS (%d)", path, n, runtime.GOMAXPROCS(0)))
	}
	if _, err := Lookup(entry.Best.Algorithm); err != nil {
		return fallback(n, fmt.Sprintf("%s names %v", path, err))
	}
	b := entry.Best
	if b.FanIn < 0 || b.FanIn == 1 {
		return fallback(n, fmt.Sprintf("%s: %d threads: fan-in %d (want 0 for the default, or 2 or more)", path, entry.Threads, b.FanIn))
	}
	t := Tuning{Threads: n, Algorithm: b.Algorithm, MedianNs: b.MedianNs, Source: path, FanIn: b.FanIn}
	if why != "" {
		t.Warning = "forced: recorded on another machine: " + why
	}
	if entry.Threads == n {
		t.CPUs = slices.Clone(b.CPUs)
	}
	if b.Algorithm == "hybrid" && b.Composition != "" {
		if entry.Threads != n || len(b.LevelKeys) == 0 && strings.Contains(b.Composition, ",") {
			// The recorded groups are for entry.Threads participants.
			t.Algorithm, t.FanIn, t.MedianNs = fallbackAlgorithm(n), 0, 0
			if _, err := Lookup(b.RunnerUp); err == nil && b.RunnerUp != "hybrid" {
				t.Algorithm = b.RunnerUp
			}
			return t
		}
		levels, err := tunedLevels(b.Composition, b.LevelKeys, n)
		if err != nil {
			return fallback(n, fmt.Sprintf("%s, %d threads: %v", path, n, err))
		}
		t.Composition, t.Levels = b.Composition, levels
	}
	return t
}

// tunedLevels rebuilds a recorded hybrid's levels for n participants: the
// composition string with the level keys (HierarchyFromKeys); a one-level
// composition needs none.
func tunedLevels(composition string, keys [][]int, n int) ([]Level, error) {
	specs, err := ParseComposition(composition)
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
	levels, err := HierarchyFromKeys(specs, keys)
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
	path := os.Getenv(ResultsEnv)
	if path == "" {
		p, err := results.DefaultPath()
		if err != nil {
			return 0
		}
		path = p
	}
	l := cache.load(path)
	if l.err != nil || l.why != "" || l.file.BlockWakeNs <= 0 {
		return 0
	}
	return time.Duration(l.file.BlockWakeNs)
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
// the tuned CPUs when the results hold a placement for exactly this count
// and it is allowed here, else plain goroutines.
func (t Tuning) Team() (*osal.Team, error) {
	if len(t.CPUs) == t.Threads && t.Threads > 0 {
		if team, err := osal.NewTeam(t.CPUs); err == nil {
			return team, nil
		}
	}
	return osal.NewUnpinnedTeam(t.Threads)
}
