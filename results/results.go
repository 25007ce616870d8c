// Package results is the install-time check's output: a versioned JSON file
// that compilers, runtimes and the barriers library read to learn the
// fastest barrier algorithm and placement for each thread count on this
// machine. The format is documented in docs/results.md with a JSON Schema
// in docs/results.schema.json.
package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/barriertune/barriertune/internal/capped"

	"github.com/barriertune/barriertune/internal/rawcpuid"

	"github.com/barriertune/barriertune/cpuset"
)

// Schema is the format identifier this package writes. Readers accept
// every v1 minor version: fields a newer minor adds are ignored, fields an
// older one lacks take their zero value (Threads.Source: "measured").
const Schema = "barriertune.results/v1.7"

// schemaMajor prefixes every schema this package reads.
const schemaMajor = "barriertune.results/v1"

// Measured ("measured") is the one word for what the check measured: a
// Threads entry's Source when the check measured that thread count (else
// SourceInferred), and a Selection's Rule when the choice is a recorded
// measurement for exactly n threads whose class fits inside the allowed
// CPUs: the check's best when it fits, else the next fastest measurement
// that does, moved onto allowed CPUs by a symmetry of the machine's tree
// (else RuleNearest or RuleOversubscribed). More threads than allowed CPUs
// are measured too when the check measured n round-robin on exactly these
// CPUs (as it does at twice and four times the CPUs): that measurement is
// the choice.
const Measured = "measured"

// Threads.Source values besides Measured.
const (
	// SourceInferred: the entry was inferred from another thread count
	// (InferredFrom) by a rule (Rule), not measured.
	SourceInferred = "inferred"
)

// File is one results file.
type File struct {
	Schema string `json:"schema"`
	// Partial is true when the check stopped early (interrupted or out of
	// budget); --resume continues it.
	Partial bool      `json:"partial"`
	Tool    Tool      `json:"tool"`
	Time    time.Time `json:"time"`
	Machine Machine   `json:"machine"`
	// Budget is the time budget the check ran with; Cuts says what it cut
	// to fit (fewer repetitions, sets or thread counts).
	Budget string   `json:"budget"`
	Cuts   []string `json:"cuts"`
	// Floor is the ping-pong one-way latency at each level of the tree.
	Floor []Floor `json:"floor"`
	// Latency is the core-to-core latency model: the median one-way
	// latency of each level of the tree over the pairs sampled (absent
	// when the check did not build one).
	Latency []LevelLatency `json:"latency,omitempty"`
	// Simulated is true when the winners were chosen by simulating the
	// latency model rather than by measuring (check --simulate).
	Simulated bool `json:"simulated,omitempty"`

	// The check's pipeline record (check.Run):
	// RoundsPlanned is how many interleaved passes over every placement
	// the plan asked for and RoundsDone how many every measured thread
	// count finished (always written from v1.6, 0 too; absent in older
	// files means 0). Fewer rounds done than planned:
	// stopped by a signal (then Partial, and --resume continues the
	// missing rounds) or by the budget (said in Cuts).
	// Inference says how a thread count absent from Threads is served: by
	// the nearest measured count (File.Nearest). Calibration is the cost
	// model the check pruned with, fitted on this machine; --simulate
	// --from-results replays it.
	RoundsPlanned int          `json:"rounds_planned,omitempty"`
	RoundsDone    int          `json:"rounds_done"`
	Inference     string       `json:"inference,omitempty"`
	Calibration   *Calibration `json:"calibration,omitempty"`

	// Waiting: BlockWakeNs is what blocking costs a waiting
	// participant on this machine, the median time from its release until
	// a participant blocked on it runs again (measured as internal/wake.BlockWake does);
	// 0 or absent when not measured. barriers.AutoPolicy spins up to twice
	// this long before it blocks.
	BlockWakeNs float64 `json:"block_wake_ns,omitempty"`

	// HostChange (v1.3) says that a floor measured beside the candidates
	// moved between host states during the check (a VM's vCPUs moved
	// between SMT siblings and separate cores, say), what it saw and how
	// the candidates were ranked; absent when no floor moved. Each moving
	// floor's States say the same in numbers.
	HostChange string `json:"host_change,omitempty"`

	// Load (v1.4) is how busy the machine was while the check measured;
	// absent from older files and simulated checks.
	Load *Load `json:"load,omitempty"`

	// OpenMP (v1.5) is the OpenMP runtimes' measurement: each runtime's
	// defaults against settings of its own knobs, per thread count;
	// absent from older files, simulated checks and checks that did not
	// reach it.
	OpenMP *OpenMP `json:"openmp,omitempty"`

	// MPI (v1.6) is the MPI implementations' measurement: each
	// implementation's defaults against settings of its own knobs, per
	// rank count; absent from older files, simulated checks and checks
	// that did not reach it.
	MPI *MPI `json:"mpi,omitempty"`

	Threads []Threads `json:"threads"`
}

// Load is what a check saw of the machine's load while it measured
// (cmd/internal/sysload): readings of the runnable tasks that were not the
// check's, of its threads' run delay, and of the load average. A busy
// check's timings measure the competition as much as the barriers.
type Load struct {
	// Busy is true when the machine was busy (another process's task was
	// runnable in the median reading); Why says what made it so.
	Busy bool   `json:"busy"`
	Why  string `json:"why,omitempty"`
	// Readings were taken over Seconds of the check.
	Readings int     `json:"readings"`
	Seconds  float64 `json:"seconds"`
	// OtherRunnable is the median over the readings of the runnable tasks
	// of other processes, OtherRunnableMax the most in one reading.
	OtherRunnable    float64 `json:"other_runnable"`
	OtherRunnableMax int     `json:"other_runnable_max"`
	// RunDelayShare is the time the check's threads waited for a CPU,
	// summed over its threads, over the wall time of the intervals in
	// which no more of them were runnable than it had CPUs; recorded, it
	// decides nothing (see sysload.Summary.Busy).
	RunDelayShare float64 `json:"run_delay_share"`
	// LoadAvgStart and LoadAvgEnd are the one-minute load average at the
	// first and the last reading.
	LoadAvgStart float64 `json:"load_avg_start"`
	LoadAvgEnd   float64 `json:"load_avg_end"`
}

// Busy reports whether the check that wrote f saw a busy machine.
func (f *File) Busy() bool { return f.Load != nil && f.Load.Busy }

// Calibration is the cost model a check pruned its candidates with: the
// model's name, its constants (model.Params by their JSON names; results
// does not import model) and what they were fitted on.
type Calibration struct {
	Model  string             `json:"model"`
	Params map[string]float64 `json:"params"`
	// FittedOn says which measurements fitted the constants ("defaults"
	// when none did); Points counts them.
	FittedOn string `json:"fitted_on"`
	Points   int    `json:"points"`
	// Loss names what the fit minimised; RMSLogRatio, MinRatio and
	// MaxRatio say how far the fitted model is from the measurements it
	// was fitted to (predicted over measured), and Residuals gives each
	// (v1.3, optional: absent from older files and from defaults).
	Loss        string                `json:"loss,omitempty"`
	RMSLogRatio float64               `json:"rms_log_ratio,omitempty"`
	MinRatio    float64               `json:"min_ratio,omitempty"`
	MaxRatio    float64               `json:"max_ratio,omitempty"`
	Residuals   []CalibrationResidual `json:"residuals,omitempty"`
}

// CalibrationResidual is one measurement a calibration was fitted to and
// the fitted model's prediction of it; Ratio is predicted over measured.
type CalibrationResidual struct {
	Threads     int     `json:"threads"`
	Algorithm   string  `json:"algorithm"`
	FanIn       int     `json:"fan_in,omitempty"`
	Policy      string  `json:"policy,omitempty"`
	MeasuredNs  float64 `json:"measured_ns"`
	PredictedNs float64 `json:"predicted_ns"`
	Ratio       float64 `json:"ratio"`
}

// LevelLatency is the median one-way latency between CPUs whose deepest
// shared object is of type Level, over Pairs sampled pairs.
type LevelLatency struct {
	Level    string  `json:"level"`
	Pairs    int     `json:"pairs"`
	MedianNs float64 `json:"median_ns"`
}

// CPUIdentity is what the CPUID instruction says about a machine's CPU.
type CPUIdentity struct {
	Vendor   string `json:"vendor"`
	Family   int    `json:"family"`
	Model    int    `json:"model"`
	Stepping int    `json:"stepping"`
	Name     string `json:"name"`
	// Hypervisor names the hypervisor vendor when running in a VM.
	Hypervisor string `json:"hypervisor,omitempty"`
}

// hostCPU returns the identity of the CPU this program runs on
// (internal/rawcpuid, the one source of it; empty fields where the system
// says nothing).
func hostCPU() CPUIdentity {
	c := rawcpuid.Identify()
	return CPUIdentity{Vendor: c.Vendor, Family: c.Family, Model: c.Model, Stepping: c.Stepping, Name: c.Name, Hypervisor: c.Hypervisor}
}

// Tool names the program and version that wrote the file.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Machine is the fingerprint of the machine the results belong to.
type Machine struct {
	CPU CPUIdentity `json:"cpu"`
	// Topology is the tree's synthetic string when it is symmetric, else
	// "canonical:" and the canonical hash.
	Topology     string `json:"topology"`
	TopologyHash string `json:"topology_hash"`
	AllowedCPUs  string `json:"allowed_cpus"`
	Kernel       string `json:"kernel"`
	GoVersion    string `json:"go_version"`
	GOMAXPROCS   int    `json:"gomaxprocs"`

	// Whole machine (v1.2, the install helper's block): the fingerprint is
	// the CPU identity and this tree; AllowedCPUs is only where the check
	// ran, and a reader may select inside any allowed subset of Tree.CPUs
	// (File.Select).
	//
	// Tree is the whole machine's CPU tree, CPUs the check could not use
	// included; absent in files before v1.2 (they apply to their
	// AllowedCPUs only).
	Tree *Tree `json:"tree,omitempty"`
	// Unmeasured says which placement classes the check could not measure
	// because its allowed CPUs did not reach them (a cgroup or affinity
	// narrower than the machine); empty when it ran on the whole machine.
	Unmeasured string `json:"unmeasured,omitempty"`
}

// Floor is the one-way core-to-core latency between two CPUs whose deepest
// shared object is of type Level ("Core": SMT siblings; "L2Cache",
// "L3Cache", "Package", "Machine": across packages).
type Floor struct {
	Level    string  `json:"level"`
	CPUs     [2]int  `json:"cpus"`
	MedianNs float64 `json:"median_ns"`
	MinNs    float64 `json:"min_ns"`
	MaxNs    float64 `json:"max_ns"`
	// UpFrontNs is the median measured before the passes, when the shown
	// floor pools the samples taken beside the candidates instead: the
	// hybrid compositions the check measured were composed from it
	// (v1.2, optional).
	UpFrontNs float64 `json:"up_front_ns,omitempty"`
	// States (v1.3) are the host states the samples taken beside the
	// candidates fell into, fastest first, when they fell into more than
	// one (the host moved the CPUs during the check); MedianNs is then the
	// median of the state RankedState, the one most rounds saw, in which
	// the candidates beside this floor were ranked.
	States      []HostState `json:"states,omitempty"`
	RankedState int         `json:"ranked_state,omitempty"`
}

// HostState is one state of the host a floor saw during a check: the
// floor's samples in it and how many rounds (one sample each) it held.
type HostState struct {
	MedianNs float64 `json:"median_ns"`
	MinNs    float64 `json:"min_ns"`
	MaxNs    float64 `json:"max_ns"`
	Rounds   int     `json:"rounds"`
}

// Repeat is a candidate measured again beside the floor before it could
// win (v1.3): its episode was below the check's impossible fraction
// (0.8) of its floor, which no barrier does. Confirmed is true when the repeat measured it at or
// above that fraction (its measurement then holds the repeat's rounds);
// otherwise it may not win (Measurement.Rejected) and the next candidate
// won.
type Repeat struct {
	Algorithm string `json:"algorithm"`
	Label     string `json:"label"`
	CPUs      []int  `json:"cpus"`
	// Why the repeat ran; FloorRatioBefore and FloorRatioAfter are the
	// candidate's median ratio to the same rounds' floor before and in
	// the repeat (0: the repeat measured nothing); Rounds counts the
	// repeat's rounds.
	Why              string  `json:"why"`
	FloorRatioBefore float64 `json:"floor_ratio_before"`
	FloorRatioAfter  float64 `json:"floor_ratio_after"`
	Rounds           int     `json:"rounds"`
	Confirmed        bool    `json:"confirmed"`
}

// Threads holds everything measured for one thread count.
type Threads struct {
	Threads int `json:"threads"`
	// Source is Measured, or SourceInferred for an entry derived
	// from the measured entry for InferredFrom threads by Rule.
	Source       string `json:"source"`
	InferredFrom int    `json:"inferred_from,omitempty"`
	Rule         string `json:"rule,omitempty"`
	// Complete is false when the check stopped before measuring every
	// chosen placement of this count.
	Complete bool `json:"complete"`
	// Best is the fastest algorithm and placement (ties within 3% go to
	// the simpler algorithm).
	Best *Choice `json:"best"`
	// Robust is the algorithm with the best worst case over the measured
	// placements, for callers that cannot pin.
	Robust       *Robust       `json:"robust"`
	Measurements []Measurement `json:"measurements"`

	// The check's pipeline record (check.Run): Rounds is how
	// many passes over this count's placements were measured; in a
	// partial file Samples keeps each measurement's raw samples (aligned
	// with Measurements) so that --resume pools the missing rounds with
	// them.
	Rounds  int         `json:"rounds,omitempty"`
	Samples [][]float64 `json:"samples,omitempty"`
	// Repeated (v1.3) lists the candidates measured again beside the
	// floor before they could win, and the outcome.
	Repeated []Repeat `json:"repeated,omitempty"`
	// OSThreads (v1.3, optional) is, for more threads than allowed CPUs,
	// the algorithm chosen on OS threads of their own (each locked to its
	// thread, unpinned, waits blocking in the kernel), as a C or C++
	// program's threads run: the simplest unless another was faster by
	// more than 3% and a significance test (else Tie, and MarginPct may
	// be negative). Best there is the goroutines' choice, which means
	// nothing to OS threads. Its CPUs are the round-robin placement,
	// Pinned false.
	OSThreads *Choice `json:"os_threads,omitempty"`
}

// Choice is a winning algorithm and placement.
type Choice struct {
	// Spec is the barrier chosen.
	Spec
	CPUs     []int   `json:"cpus"`
	Label    string  `json:"label"`
	Pinned   bool    `json:"pinned"`
	MedianNs float64 `json:"median_ns"`
	CILowNs  float64 `json:"ci_low_ns"`
	CIHighNs float64 `json:"ci_high_ns"`
	// RunnerUp is the best other algorithm (on any placement) and
	// MarginPct how much slower its median is, in percent.
	RunnerUp  string  `json:"runner_up"`
	MarginPct float64 `json:"margin_pct"`
	// Tie is true when the runner-up could not be told apart from the
	// winner; TieRule says how the tie was decided.
	Tie     bool   `json:"tie,omitempty"`
	TieRule string `json:"tie_rule,omitempty"`
	// GoOnly (v1.6, always written) is true when the algorithm exists
	// only in Go (the goroutine barrier, the sync.Cond and channel
	// baselines): a C, C++ or OpenMP program cannot run it, and takes the
	// count's os_threads choice instead.
	GoOnly bool `json:"go_only"`
}

// Robust is the algorithm whose slowest measured placement is fastest.
type Robust struct {
	Algorithm     string  `json:"algorithm"`
	Policy        string  `json:"policy"`
	WorstMedianNs float64 `json:"worst_median_ns"`
	WorstLabel    string  `json:"worst_label"`
	Placements    int     `json:"placements"`
}

// Measurement is one algorithm timed on one placement.
type Measurement struct {
	// Spec is the barrier measured.
	Spec
	Label  string `json:"label"`
	Config string `json:"config"`
	CPUs   []int  `json:"cpus"`
	Pinned bool   `json:"pinned"`
	// Summary is the samples' statistics (see the paired case below).
	Summary
	// NormalizedNs is the floor-normalised median of every round (each
	// sample over the same round's floor sample, times the median of all
	// the floor's samples); 0 where no floor ran alongside (oversubscribed
	// placements). Recorded for comparison only: winners are ranked by
	// MedianNs.
	NormalizedNs float64 `json:"normalized_ns,omitempty"`
	// Where a floor ran beside the candidate (v1.3), MedianNs, MinNs,
	// MaxNs, the interval, MeanNs and StddevNs are paired: its samples
	// over the same rounds' floor samples, in the rounds whose floor saw
	// the host state its floor was ranked in (Floor.RankedState), times
	// that state's floor median; FloorRatio is the median of those ratios
	// (MedianNs over the floor's MedianNs), RankedRounds counts them and
	// RawMedianNs is the plain median of every sample, all states pooled
	// (what MedianNs was before v1.3). Without a floor beside it MedianNs
	// is the plain median and these are absent.
	FloorRatio   float64 `json:"floor_ratio,omitempty"`
	RankedRounds int     `json:"ranked_rounds,omitempty"`
	RawMedianNs  float64 `json:"raw_median_ns,omitempty"`
	// Rejected (v1.3) says why this measurement may not win: its episode
	// was below the check's impossible fraction (0.8) of its floor and a
	// repeat beside the floor did not confirm it (Threads.Repeated).
	// Selector.Select never chooses it.
	Rejected string `json:"rejected,omitempty"`
	Reps     int    `json:"reps"`
	Dropped  bool   `json:"dropped"`
	// PredictedNs is the latency model's prediction for this candidate.
	PredictedNs float64 `json:"predicted_ns,omitempty"`
}

// Summary is what one set of samples (ns per episode) says: the median,
// bounded with about 95% confidence by order statistics (CILowNs,
// CIHighNs), the extremes, and the mean and standard deviation of the
// samples left after dropping the Outliers (far from the quartiles). The
// check's measurements and bench's results carry one.
type Summary struct {
	MedianNs float64 `json:"median_ns"`
	MinNs    float64 `json:"min_ns"`
	MaxNs    float64 `json:"max_ns"`
	CILowNs  float64 `json:"ci_low_ns"`
	CIHighNs float64 `json:"ci_high_ns"`
	MeanNs   float64 `json:"mean_ns,omitempty"`
	StddevNs float64 `json:"stddev_ns,omitempty"`
	Outliers int     `json:"outliers,omitempty"`
}

// Spec names one barrier as the check ran it, wherever a file names one
// (Measurement, Choice, Selection): the algorithm, the waiting policy it
// was measured with, its tree fan-in (0: the default, or none), and for a
// hybrid its composition (lowest level first, as barriers.Hierarchy.String
// writes it) with the level keys that rebuild its groups for exactly the
// entry's thread count: row l, one per level, gives each rank the group it
// is under at that level (barriers.Hierarchy.Grouped).
type Spec struct {
	Algorithm   string  `json:"algorithm"`
	Policy      string  `json:"policy"`
	Composition string  `json:"composition,omitempty"`
	FanIn       int     `json:"fan_in,omitempty"`
	LevelKeys   [][]int `json:"level_keys,omitempty"`
}

// Describe names the barrier for people: the algorithm, with its fan-in
// ("combining(8)") or a hybrid's composition
// ("hybrid(core:dissemination,package:central)").
func (s Spec) Describe() string {
	switch {
	case s.Composition != "":
		return s.Algorithm + "(" + s.Composition + ")"
	case s.FanIn > 0:
		return s.Algorithm + "(" + strconv.Itoa(s.FanIn) + ")"
	}
	return s.Algorithm
}

// (Spec has no String method on purpose: embedded, it would replace the
// default formatting of every Measurement, Choice and Selection.)

// host returns this machine's light fingerprint, computed without reading
// the CPU tree: CPU identity (CPUID), the allowed CPU set given (Linux
// list form), kernel, Go version and GOMAXPROCS. Topology and TopologyHash
// are left empty; the check fills them from the tree it measured on.
func host(allowedCPUs string) Machine {
	return Machine{
		CPU:         hostCPU(),
		AllowedCPUs: allowedCPUs,
		Kernel:      kernel(),
		GoVersion:   runtime.Version(),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
	}
}

// Mismatch returns why results recorded on m do not apply to this machine
// (cur), or "" when they do: same CPU identity, same whole-machine tree,
// and cur's allowed CPUs inside the recorded tree. The trees are compared
// only when both fingerprints carry a TopologyHash: a light fingerprint
// (Host) trusts the recorded tree. A file without a tree (before v1.2)
// applies only to its own allowed CPUs. Kernel, Go version and GOMAXPROCS
// may differ.
func (m Machine) Mismatch(cur Machine) string {
	var why []string
	if m.CPU.Vendor != cur.CPU.Vendor || m.CPU.Family != cur.CPU.Family || m.CPU.Model != cur.CPU.Model || m.CPU.Name != cur.CPU.Name {
		why = append(why, fmt.Sprintf("CPU %q (family %d model %d) here, %q (family %d model %d) in the file",
			cur.CPU.Name, cur.CPU.Family, cur.CPU.Model, m.CPU.Name, m.CPU.Family, m.CPU.Model))
	}
	if m.TopologyHash != "" && cur.TopologyHash != "" && m.TopologyHash != cur.TopologyHash {
		why = append(why, fmt.Sprintf("topology %s here, %s in the file", cur.Topology, m.Topology))
	}
	if w := m.allowedMismatch(cur.AllowedCPUs); w != "" {
		why = append(why, w)
	}
	return strings.Join(why, "; ")
}

// allowedMismatch says why a process allowed the CPUs cur cannot use the
// file: CPUs outside the recorded tree, or, without a tree, another set.
func (m Machine) allowedMismatch(cur string) string {
	if m.Tree == nil {
		if m.AllowedCPUs != cur {
			return fmt.Sprintf("allowed CPUs %s here, %s in the file (it records no machine tree: rerun the check)", cur, m.AllowedCPUs)
		}
		return ""
	}
	all, err1 := cpuset.ParseList(m.Tree.CPUs)
	here, err2 := cpuset.ParseList(cur)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("allowed CPUs %s here, tree CPUs %s in the file", cur, m.Tree.CPUs)
	}
	if !here.SubsetOf(all) {
		return fmt.Sprintf("allowed CPUs %s here, but the machine in the file has CPUs %s", cur, m.Tree.CPUs)
	}
	return ""
}

// ResumeMismatch is Mismatch for `check --resume`, which adds measurements
// to the file: the allowed CPUs must also be the same, so that the
// placements measured before and now come from one set.
func (m Machine) ResumeMismatch(cur Machine) string {
	why := m.Mismatch(cur)
	if m.AllowedCPUs != cur.AllowedCPUs && m.Tree != nil {
		w := fmt.Sprintf("allowed CPUs %s here, %s in the file", cur.AllowedCPUs, m.AllowedCPUs)
		if why == "" {
			return w
		}
		return why + "; " + w
	}
	return why
}

// defaultPath is where `barriertune check` writes and readers look by
// default: $XDG_CONFIG_HOME/barriertune/results.json (os.UserConfigDir).
func defaultPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no per-user config directory (set XDG_CONFIG_HOME or HOME, or give a path): %w", err)
	}
	return filepath.Join(dir, "barriertune", "results.json"), nil
}

// maxFileSize caps the results files Read accepts: a check of thousands of
// thread counts stays far below it.
const maxFileSize = 64 << 20

// readHint ends the error of a file Read refuses.
const readHint = "give the file `barriertune check` wrote"

// Read loads and validates a results file. A missing file's error wraps
// os.ErrNotExist; a truncated, corrupted or foreign file gets a one-line
// error saying what is wrong.
//
// Only regular files of at most maxFileSize bytes are read: a device
// (/dev/zero) or a FIFO gets an error, not a hang.
func Read(path string) (*File, error) {
	data, err := capped.File{What: "results file", Hint: readHint, Limit: maxFileSize}.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse validates and decodes a results file's bytes; name is used in
// errors.
func Parse(data []byte, name string) (*File, error) {
	var probe struct {
		Schema *string `json:"schema"`
	}
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] != '{' {
		return nil, fmt.Errorf("results file %s is not a barriertune results file (not a JSON object); give the file `barriertune check` wrote", name)
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("results file %s is not valid JSON (truncated or corrupted at byte %d of %d); run `barriertune check` again", name, se.Offset, len(data))
		}
		return nil, fmt.Errorf("results file %s is not a barriertune results file: %v", name, err)
	}
	if probe.Schema == nil {
		return nil, fmt.Errorf("results file %s has no \"schema\" field: not a barriertune results file", name)
	}
	newer, ok := readable(*probe.Schema)
	if !ok {
		return nil, fmt.Errorf("results file %s has schema %q; this barriertune reads %s and its minor versions (%s.N)", name, *probe.Schema, schemaMajor, schemaMajor)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if !newer {
		dec.DisallowUnknownFields()
	}
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("results file %s does not match %s: %v", name, *probe.Schema, err)
	}
	for i := range f.Threads {
		if f.Threads[i].Source == "" {
			f.Threads[i].Source = Measured // v1.0 files
		}
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("results file %s: %w", name, err)
	}
	return &f, nil
}

// readable reports whether schema is v1 or a v1 minor version (v1.N), and
// whether that minor is newer than Schema's (its unknown fields are then
// ignored).
func readable(schema string) (newer, ok bool) {
	if schema == schemaMajor {
		return false, true
	}
	minor, found := strings.CutPrefix(schema, schemaMajor+".")
	if !found {
		return false, false
	}
	n, err := strconv.Atoi(minor)
	if err != nil || n < 0 || strconv.Itoa(n) != minor {
		return false, false
	}
	ours, _ := strconv.Atoi(strings.TrimPrefix(Schema, schemaMajor+"."))
	return n > ours, true
}

func (f *File) validate() error {
	if f.Machine.TopologyHash == "" || f.Machine.AllowedCPUs == "" {
		return errors.New("the machine fingerprint is incomplete (topology_hash and allowed_cpus are required)")
	}
	if t := f.Machine.Tree; t != nil {
		if _, err := t.Topology(); err != nil {
			return fmt.Errorf("machine tree: %w", err)
		}
	}
	seen := map[int]bool{}
	for _, t := range f.Threads {
		if t.Threads < 1 {
			return fmt.Errorf("thread count %d is not positive", t.Threads)
		}
		if seen[t.Threads] {
			return fmt.Errorf("thread count %d appears twice", t.Threads)
		}
		seen[t.Threads] = true
		if t.Best != nil && (t.Best.Algorithm == "" || len(t.Best.CPUs) != t.Threads) {
			return fmt.Errorf("thread count %d: best entry needs an algorithm and %d CPUs", t.Threads, t.Threads)
		}
		if o := t.OSThreads; o != nil && (o.Algorithm == "" || len(o.CPUs) != t.Threads) {
			return fmt.Errorf("thread count %d: os_threads entry needs an algorithm and %d CPUs", t.Threads, t.Threads)
		}
	}
	if err := f.OpenMP.validate(); err != nil {
		return err
	}
	if err := f.MPI.validate(); err != nil {
		return err
	}
	return checkTimes(f)
}

// Lookup returns the entry for n threads, or nil.
func (f *File) Lookup(n int) *Threads {
	i := slices.IndexFunc(f.Threads, func(t Threads) bool { return t.Threads == n })
	if i < 0 {
		return nil
	}
	return &f.Threads[i]
}

// Nearest returns the entry with a best choice for n threads, or else the
// nearest thread count measured (ties go to the larger), or nil.
func (f *File) Nearest(n int) *Threads {
	var best *Threads
	for i := range f.Threads {
		t := &f.Threads[i]
		if t.Best == nil {
			continue
		}
		d, bd := abs(t.Threads-n), 0
		if best != nil {
			bd = abs(best.Threads - n)
		}
		if best == nil || d < bd || d == bd && t.Threads > best.Threads {
			best = t
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// FloorFor is the floor a placement on cpus cannot beat: the slowest
// measured floor whose pair lies inside it, else the fastest floor (0 when
// the file measured none).
func (f *File) FloorFor(cpus cpuset.Placement) float64 {
	inside, fastest := 0.0, math.Inf(1)
	for _, fl := range f.Floor {
		fastest = min(fastest, fl.MedianNs)
		if slices.Contains(cpus, fl.CPUs[0]) && slices.Contains(cpus, fl.CPUs[1]) {
			inside = max(inside, fl.MedianNs)
		}
	}
	if inside > 0 {
		return inside
	}
	if math.IsInf(fastest, 1) {
		return 0
	}
	return fastest
}
