package check

import (
	"reflect"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/configsets"
	"github.com/barriertune/barriertune/results"
)

// TestInterleavedFloors: a level's pair measured alongside the candidates
// of a placement (its first two CPUs, either order) takes those samples,
// pooled over passes and placements; other pairs keep the floor measured
// up front.
func TestInterleavedFloors(t *testing.T) {
	p := &plan{units: []unit{
		{threads: 2, sets: []configsets.Set{{Threads: 2, CPUs: []int{1, 0}}}},
		{threads: 4, sets: []configsets.Set{{Threads: 4, CPUs: []int{0, 1, 2, 3}}, {Threads: 4, CPUs: []int{0, 2, 1, 3}}}},
	}}
	s := &samples{floorSamples: map[key][]float64{
		{0, 0}: {50, 52, 51},
		{1, 0}: {49, 90},
		{1, 1}: {70, 71, 72},
	}}
	floors := []results.Floor{
		{Level: "L3Cache", CPUs: [2]int{0, 1}, MedianNs: 400, MinNs: 300, MaxNs: 500},
		{Level: "Package", CPUs: [2]int{0, 2}, MedianNs: 80, MinNs: 75, MaxNs: 85},
		{Level: "Machine", CPUs: [2]int{0, 3}, MedianNs: 120, MinNs: 110, MaxNs: 130},
	}
	got := interleavedFloors(floors, p, s)
	want := []results.Floor{
		{Level: "L3Cache", CPUs: [2]int{0, 1}, MedianNs: 51, MinNs: 49, MaxNs: 90, UpFrontNs: 400},
		{Level: "Package", CPUs: [2]int{0, 2}, MedianNs: 71, MinNs: 70, MaxNs: 72, UpFrontNs: 80},
		floors[2],
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("floor %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if floors[0].MedianNs != 400 {
		t.Error("the floors given were changed")
	}
}
