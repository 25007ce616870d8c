package cpuset_test

import (
	"fmt"
	"runtime"

	"github.com/barriertune/barriertune/cpuset"
)

// A placement puts rank i on CPU p[i]; it is oversubscribed on any machine
// when a CPU repeats.
func ExamplePlacement_Oversubscribed() {
	fmt.Println(cpuset.Placement{0, 1, 2, 3}.Oversubscribed())
	fmt.Println(cpuset.Placement{0, 1, 0, 1}.Oversubscribed(), cpuset.Placement{0, 1, 0, 1}.CPUs())
	// Output:
	// false
	// true [0 1]
}

// More ranks than GOMAXPROCS cannot each hold a CPU in this process, even
// on distinct CPUs.
func ExampleOversubscribed() {
	n := runtime.GOMAXPROCS(0) + 1
	fmt.Println(cpuset.Oversubscribed(n), cpuset.Oversubscribed(1))
	// Output: true false
}
