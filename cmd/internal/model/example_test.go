package model_test

import (
	"fmt"
	"strings"

	"github.com/barriertune/barriertune/cmd/internal/latency"
	"github.com/barriertune/barriertune/cmd/internal/model"
)

// Predict one episode of three algorithms on four CPUs: two pairs of SMT
// siblings 10 ns apart, 50 ns between the pairs (a matrix in the
// ../shared/latency CSV format: the lower triangle). The default model
// adds the shared lines' transfers: central's three increments of one
// counter queue on its line (0.4 of each link's latency apart: the last,
// arriving at 50 ns, completes at 70), and its release flag is refetched by
// three waiters one after another (0.1 of a link each: the last at
// 70 + 50 + 5 ns).
func ExamplePredict() {
	m, err := latency.ReadCSV(strings.NewReader(",,,\n10,,,\n50,50,,\n50,50,10,\n"))
	if err != nil {
		panic(err)
	}
	cpus := []int{0, 1, 2, 3} // rank r runs on CPU r
	for _, alg := range []string{"dissemination", "central", "static-tree"} {
		cp, _ := model.Predict(model.CriticalPathModel, alg, cpus, m, 0)
		def, _ := model.Predict(model.DefaultModel, alg, cpus, m, 0)
		fmt.Printf("%-13s critical path %3.0f ns, default model %3.0f ns\n", alg, cp, def)
	}
	// Output:
	// dissemination critical path 100 ns, default model 100 ns
	// central       critical path 100 ns, default model 125 ns
	// static-tree   critical path 100 ns, default model 110 ns
}
