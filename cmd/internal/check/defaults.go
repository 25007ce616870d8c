package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/cmd/internal/catalog"
	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/cmd/internal/model"
)

// prepare validates cfg and fills in its defaults (the one place they are
// written): algorithms, thread counts sorted and each once, the measurer,
// the model.
func prepare(cfg Config) (Config, error) { return prepareFor(cfg, false) }

// prepareFor is prepare; a dry run (DryRun) does not need the topology's
// CPUs to be this process's.
func prepareFor(cfg Config, dry bool) (Config, error) {
	topo := cfg.Topology
	if topo == nil {
		return cfg, fmt.Errorf("check: no topology")
	}
	if cfg.Budget < 0 || cfg.SetsLimit < 0 || cfg.SampleTarget < 0 || cfg.Keep < 0 {
		return cfg, fmt.Errorf("check: budget %s, sets limit %d, sample time %s, keep %d: negative values are not accepted (0 takes the default)",
			cfg.Budget, cfg.SetsLimit, cfg.SampleTarget, cfg.Keep)
	}
	npus := len(topo.PUs())
	if npus < 1 {
		return cfg, fmt.Errorf("check: the topology has no PUs (want at least 1)")
	}
	if cfg.Measurer == nil {
		cfg.Measurer = Hardware{}
	}
	if err := cfg.Measurer.Accept(topo, dry); err != nil {
		return cfg, err
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.SetsLimit == 0 {
		cfg.SetsLimit = configsets.DefaultLimit
	}
	if cfg.SampleTarget == 0 {
		cfg.SampleTarget = DefaultSampleTime
	}
	if cfg.Keep == 0 {
		cfg.Keep = defaultKeep
	}
	if cfg.Model == "" {
		cfg.Model = model.DefaultModel
	}
	if err := cfg.Model.Check(); err != nil {
		return cfg, fmt.Errorf("check: %w", err)
	}
	algs := slices.Clone(cfg.Algorithms)
	if len(algs) == 0 {
		algs = catalog.Names()
	}
	for i, a := range algs {
		if _, err := barriers.Lookup(a); err != nil {
			return cfg, err
		}
		if slices.Contains(algs[:i], a) {
			return cfg, fmt.Errorf("algorithm %q is named twice; name each once", a)
		}
	}
	cfg.Algorithms = algs
	threads := slices.Clone(cfg.Threads)
	if len(threads) == 0 {
		threads = WithBoundaryCounts(DefaultThreadCounts(npus), topo)
	}
	for _, t := range threads {
		if t < 1 || t > barriers.MaxParticipants {
			return cfg, fmt.Errorf("thread count %d: want 1..%d", t, barriers.MaxParticipants)
		}
	}
	if len(cfg.Threads) == 0 {
		threads = WithOversubscribedCounts(threads, npus)
		if h, ok := cfg.Measurer.Hosts(); ok && !dry {
			// A machine of thousands of CPUs: its default counts (4x
			// the PUs) can exceed what this process hosts; explicit
			// counts are refused by the CLI instead.
			var left []string
			threads = slices.DeleteFunc(threads, func(t int) bool {
				if t > h.Max {
					left = append(left, strconv.Itoa(t))
					return true
				}
				return false
			})
			if len(left) > 0 {
				cfg.unhosted = fmt.Sprintf("thread counts %s not measured: more than the %d threads this process can host (the Go runtime's limit of %d OS threads less its own, or half the available memory at %d KiB a thread)",
					strings.Join(left, ", "), h.Max, h.ThreadLimit, ThreadMemory>>10)
			}
		}
	}
	// Each thread count once: a file with one twice is unreadable.
	slices.Sort(threads)
	cfg.Threads = slices.Compact(threads)
	return cfg, nil
}
