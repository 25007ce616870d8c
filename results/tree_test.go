package results

import (
	"fmt"
	"strings"
	"testing"
)

// TestTreeRefusesBadTrees: a recorded tree that is not a tree, or too
// large to build cheaply, is refused with one line naming the problem.
func TestTreeRefusesBadTrees(t *testing.T) {
	many := make([]string, 300)
	for i := range many {
		many[i] = "65535" // each a 1024-word set
	}
	for _, c := range []struct {
		tree Tree
		want string
	}{
		{Tree{CPUs: ""}, "has no CPU"},
		{Tree{CPUs: "0-3", Levels: []TreeLevel{{Type: "Core", Sets: []string{"0-1", "1-2"}}}}, "partially overlap"},
		{Tree{CPUs: "0-3", Levels: []TreeLevel{{Type: "Core", Sets: []string{"0-1", "0-1"}}}}, "appear twice"},
		{Tree{CPUs: "0-3", Levels: []TreeLevel{{Type: "Core", Sets: []string{"4"}}}}, "outside the tree's CPUs"},
		{Tree{CPUs: "0-3", Levels: []TreeLevel{{Type: "", Sets: []string{"0"}}}}, "has no type"},
	} {
		if _, err := c.tree.Topology(); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want %q", c.tree, err, c.want)
		}
	}
	huge := Tree{CPUs: "0-65535"}
	for l := 0; l < 120; l++ {
		huge.Levels = append(huge.Levels, TreeLevel{Type: fmt.Sprint("L", l), Sets: many})
	}
	if _, err := huge.Topology(); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("36,000 sets of 1,024 words: %v, want refused before parsing", err)
	}
	for list, want := range map[string]int{"0-3,8": 8, "65535,0": 65535, "": 0, "99999999": 65535, "12-x": 12} {
		if got := lastIndex(list); got != want {
			t.Errorf("lastIndex(%q) = %d, want %d", list, got, want)
		}
	}
}
