package export

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Open MPI reads its dynamic rules from one file, in one of two formats:
//
//   - classic (Open MPI 4.1 and 5.0): numbers and comments, each
//     communicator-size entry applying from its size up to the next
//     entry's. Open MPI 6 still reads it, but as the ends of ranges, not
//     their starts (coll_tuned_dynamic_file.c): a file written for 5.0
//     means something else there, so no classic file is written for a
//     check that measured 6.
//   - JSON (Open MPI 6.0 and later; docs/tuning-apps/collectives/tuned.rst
//     and the schema docs/tuning-apps/tuned_dynamic_file_schema.json, in
//     open-mpi/ompi from commit e973840e2baddec29c200cf1850ace675eee5332,
//     the same on the v6.0.x branch at bb1c85d203cdb7162f0cd92f71f7298048cd9581):
//     an object with rule_file_version, module and collectives; per
//     collective (by name: "barrier") a list of communicator rules with
//     inclusive comm_size_min and comm_size_max (an integer or "inf"),
//     comm_rank_distribution ("any", "one-per-node", "single-node") and
//     a list of message-size rules, each with alg (its number or name,
//     checked against coll_tuned_barrier_algorithm; 0 is "ignore", the
//     fixed decision). The first communicator rule that matches is used;
//     a size no rule matches gets the fixed decision. Open MPI tries the
//     file as JSON first and reads it as classic only when it is not
//     JSON.
//
// The JSON export holds the same ranges as the classic one: the measured
// counts with their algorithms, and algorithm 0 (Open MPI's own fixed
// decision) for every size between and beyond them. Its rules hold for
// single-node communicators only (comm_rank_distribution "single-node"):
// the check measured ranks of one node, and a communicator that spans
// nodes matches no rule and keeps the fixed decision. JSON has no
// comments: the parameter file that names it says where it came from.

// MPIJSONRulesSuffix is appended to the openmpi export's path for its
// JSON rules file.
const MPIJSONRulesSuffix = ".rules.json"

// RulesFormats are the values of Options.RulesFormat (export --rules):
// auto (the format the measured Open MPI reads: JSON from 6.0 on,
// classic before), classic, json, and both (classic, named by the
// parameter file, and JSON beside it, for a node about to move to 6.0).
func RulesFormats() []string { return []string{"auto", "classic", "json", "both"} }

// rulesFormat says which rules files an export writes.
type rulesFormat struct{ classic, json bool }

// checkRulesFormat refuses a format that is not one of RulesFormats ("" is
// auto).
func checkRulesFormat(name string) error {
	if name != "" && !slices.Contains(RulesFormats(), name) {
		return fmt.Errorf("rules format %q: want one of %s", name, strings.Join(RulesFormats(), ", "))
	}
	return nil
}

// rulesFormats are the files written for format name and the measured
// Open MPI's major version (0 when its report does not say), and which
// of them the parameter file names ("classic" or "json"). It refuses a
// classic file for Open MPI 6 and a JSON-only export for one before 6
// (neither would read it as written).
func rulesFormats(name string, major int, version string) (rulesFormat, string, error) {
	if err := checkRulesFormat(name); err != nil {
		return rulesFormat{}, "", err
	}
	v6 := major >= 6
	switch name {
	case "", "auto":
		if v6 {
			return rulesFormat{json: true}, "json", nil
		}
		return rulesFormat{classic: true}, "classic", nil
	case "json":
		if major > 0 && !v6 {
			return rulesFormat{}, "", fmt.Errorf("--rules json: the check measured %s, which reads only the classic rules format (JSON is read from Open MPI 6.0 on): use --rules auto or classic, or both to write the JSON file beside it", oneLine(version))
		}
		return rulesFormat{json: true}, "json", nil
	}
	if v6 {
		return rulesFormat{}, "", fmt.Errorf("--rules %s: the check measured %s: Open MPI 6 reads a classic rules file's communicator sizes as the ends of ranges, not their starts; use --rules auto or json (the JSON format 6.0 reads)", name, oneLine(version))
	}
	if name == "both" {
		return rulesFormat{classic: true, json: true}, "classic", nil
	}
	return rulesFormat{classic: true}, "classic", nil
}

// rulesRange is one communicator-size range of the rules: from..to
// ranks (to 0: no end), algorithm alg (0: Open MPI's own decision).
type rulesRange struct{ from, to, alg int }

// openMPIRanges are the ranges from 1 rank up: each measured count
// (algs, by rank count, not empty) on its own with its algorithm, and
// algorithm 0 between and beyond them.
func openMPIRanges(algs map[int]int) []rulesRange {
	counts := make([]int, 0, len(algs))
	for n := range algs {
		counts = append(counts, n)
	}
	slices.Sort(counts)
	var es []rulesRange
	if counts[0] > 1 {
		es = append(es, rulesRange{1, counts[0] - 1, 0})
	}
	for i, n := range counts {
		es = append(es, rulesRange{n, n, algs[n]})
		if _, next := algs[n+1]; !next {
			to := 0
			if i+1 < len(counts) {
				to = counts[i+1] - 1
			}
			es = append(es, rulesRange{n + 1, to, 0})
		}
	}
	return es
}

// The JSON rules file's objects, in the order Open MPI's documentation
// writes their fields.
type (
	jsonRules struct {
		RuleFileVersion int                       `json:"rule_file_version"`
		Module          string                    `json:"module"`
		Collectives     map[string][]jsonCommRule `json:"collectives"`
	}
	jsonCommRule struct {
		CommSizeMin  int           `json:"comm_size_min"`
		CommSizeMax  any           `json:"comm_size_max"` // an integer or "inf"
		Distribution string        `json:"comm_rank_distribution"`
		Rules        []jsonMsgRule `json:"rules"`
	}
	jsonMsgRule struct {
		MsgSizeMin int    `json:"msg_size_min"`
		MsgSizeMax string `json:"msg_size_max"`
		Alg        int    `json:"alg"`
	}
)

// openMPIJSONRules is the JSON rules file of es: rule_file_version 3,
// module tuned, the barrier's ranges for single-node communicators, one
// message-size rule each (every size: a barrier carries none).
func openMPIJSONRules(es []rulesRange) ([]byte, error) {
	var crs []jsonCommRule
	for _, e := range es {
		var to any = e.to
		if e.to == 0 {
			to = "inf"
		}
		crs = append(crs, jsonCommRule{
			CommSizeMin: e.from, CommSizeMax: to, Distribution: "single-node",
			Rules: []jsonMsgRule{{MsgSizeMin: 0, MsgSizeMax: "inf", Alg: e.alg}},
		})
	}
	out, err := json.MarshalIndent(jsonRules{RuleFileVersion: 3, Module: "tuned", Collectives: map[string][]jsonCommRule{"barrier": crs}}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("the JSON rules: %w", err)
	}
	return append(out, '\n'), nil
}
