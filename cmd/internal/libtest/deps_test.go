package libtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryUserDownloads: `go mod tidy` in a module that imports barriers
// loads barriers, the packages it imports, and their tests; every package
// those need is this module's, the standard library's, or in x/sys or
// cyclicbarrier, so tidy downloads no other module (once, the tests of
// barriers and results imported measure and hwtree, and tidy fetched ghw,
// pcidb, yaml, plist, wmi, go-ole and x/perf).
func TestLibraryUserDownloads(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH:", err)
	}
	const mod = "github.com/barriertune/barriertune"
	out, err := exec.Command(gobin, "list", "-deps", mod+"/barriers").Output()
	if err != nil {
		t.Skip("go list:", err)
	}
	var own []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, mod+"/") {
			own = append(own, p)
		}
	}
	out, err = exec.Command(gobin, append([]string{"list", "-deps", "-test"}, own...)...).Output()
	if err != nil {
		t.Skip("go list -test:", err)
	}
	allowed := []string{mod + "/", "golang.org/x/sys/", "github.com/marusama/cyclicbarrier"}
	for _, line := range strings.Split(string(out), "\n") {
		p, _, _ := strings.Cut(strings.TrimSpace(line), " ") // "pkg [pkg.test]": a test's variant
		if p == "" || strings.HasSuffix(p, ".test") {
			continue
		}
		first, _, _ := strings.Cut(p, "/")
		if !strings.Contains(first, ".") || strings.HasPrefix(p, "vendor/") {
			continue // the standard library
		}
		ok := false
		for _, a := range allowed {
			ok = ok || strings.HasPrefix(p, a)
		}
		if !ok {
			t.Errorf("a library user's go mod tidy downloads the module of %s (a test of %v imports it); move that test to cmd/internal/libtest", p, own)
		}
	}
}
