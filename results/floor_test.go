package results

import "testing"

// TestFloorFor: a placement's floor is the slowest measured pair inside
// it, else the fastest floor, else none.
func TestFloorFor(t *testing.T) {
	f := &File{Floor: []Floor{{Level: "Core", CPUs: [2]int{0, 1}, MedianNs: 30}, {Level: "Package", CPUs: [2]int{0, 4}, MedianNs: 90}}}
	for _, c := range []struct {
		cpus []int
		want float64
	}{{[]int{0, 1, 4}, 90}, {[]int{0, 1}, 30}, {[]int{2, 3}, 30}} {
		if got := f.FloorFor(c.cpus); got != c.want {
			t.Errorf("FloorFor(%v) = %v, want %v", c.cpus, got, c.want)
		}
	}
	if got := (&File{}).FloorFor([]int{0, 1}); got != 0 {
		t.Errorf("no floors: %v", got)
	}
}
