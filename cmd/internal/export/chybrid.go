package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/barriertune/barriertune/barriers"
	"github.com/barriertune/barriertune/internal/algname"
	"github.com/barriertune/barriertune/results"
)

// cMaxLevels is the header's BARRIERTUNE_MAX_LEVELS, the cap on a
// hybrid's levels.
const cMaxLevels = 16

// cHybrid returns the levels of the hybrid s (its composition) and their
// keys for its s.Threads participants (the recorded level keys; none
// needed for one level), as the c-barrier header runs them; the error
// says why the header cannot: a level whose algorithm only Go runs, too
// many levels, or keys that do not give the groups.
func cHybrid(s results.Selection) (barriers.Hierarchy, [][]int, error) {
	levels, err := barriers.ParseHierarchy(s.Composition)
	if err != nil {
		return nil, nil, err
	}
	if len(levels) > cMaxLevels {
		return nil, nil, fmt.Errorf("%d levels (the C barrier takes up to %d)", len(levels), cMaxLevels)
	}
	for _, l := range levels {
		if a := l.Algorithm; a == algname.Hybrid || a != "" && !CRunnable(a) {
			return nil, nil, fmt.Errorf("its level %s runs %s, which only Go runs", l.Name, a)
		}
	}
	keys := s.LevelKeys
	if len(keys) == 0 && len(levels) == 1 {
		keys = [][]int{make([]int, s.Threads)}
	}
	for l, row := range keys {
		if len(row) != s.Threads {
			return nil, nil, fmt.Errorf("level_keys row %d has %d entries for %d threads", l, len(row), s.Threads)
		}
	}
	if _, err := levels.Grouped(keys); err != nil {
		return nil, nil, err
	}
	return levels, keys, nil
}

// cLevels writes the C arrays of a hybrid row's levels ((algorithm,
// fan-in) pairs, lowest first) and keys (level by level, one per
// participant), and returns the row's fields naming them. The row is one
// forThreads kept, so cHybrid accepts it.
func cLevels(b *strings.Builder, r headerEntry) string {
	levels, keys, err := cHybrid(r.sel)
	if err != nil {
		panic("export: a hybrid row C cannot run: " + err.Error())
	}
	pairs := make([]string, 0, 2*len(levels))
	for _, l := range levels {
		a := l.Algorithm
		if a == "" {
			a = algname.Dissemination
		}
		pairs = append(pairs, "BARRIERTUNE_ALG_"+cIdent(a), strconv.Itoa(l.FanIn))
	}
	var flat []int
	for _, row := range keys {
		flat = append(flat, row...)
	}
	fmt.Fprintf(b, "/* the hybrid for %d threads: %s */\n", r.lo, strings.ReplaceAll(r.sel.Composition, "*/", "* /"))
	fmt.Fprintf(b, "static const int barriertune_levels_%d[%d] = {%s};\n", r.lo, len(pairs), strings.Join(pairs, ", "))
	fmt.Fprintf(b, "static const int barriertune_level_keys_%d[%d] = {%s};\n", r.lo, len(flat), strings.ReplaceAll(joinInts(flat), ",", ", "))
	return fmt.Sprintf("%d, barriertune_levels_%d, barriertune_level_keys_%d", len(levels), r.lo, r.lo)
}
