package cpuset_test

import (
	"fmt"

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
