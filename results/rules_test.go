package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveKeepsTheCompleteFile: a partial or less complete run never
// replaces a complete file; it goes beside it, to FILE.partial.
func TestSaveKeepsTheCompleteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	good := sample(t)
	if got, err := Save(path, good); err != nil || got != path {
		t.Fatalf("first save: %s, %v", got, err)
	}
	for name, f := range map[string]*File{
		"partial":  func() *File { f := sample(t); f.Partial = true; return f }(),
		"empty":    func() *File { f := sample(t); f.Threads = []Threads{}; return f }(),
		"narrower": func() *File { f := sample(t); f.Threads = f.Threads[:1]; return f }(),
	} {
		got, err := Save(path, f)
		if err != nil || got != path+partialSuffix {
			t.Errorf("%s run saved to %s (%v), want %s", name, got, err, path+partialSuffix)
		}
		back, err := Read(path)
		if err != nil || back.Partial || len(back.Threads) != 2 {
			t.Errorf("%s run: the complete file changed: %+v, %v", name, back, err)
		}
	}
	// A complete run as wide as the old one replaces it; a partial file is
	// replaced by anything.
	wider := sample(t)
	wider.Threads = append(wider.Threads, Threads{Threads: 8, Source: SourceMeasured, Complete: true,
		Best: &Choice{CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Spec: Spec{Algorithm: "central"}}, Measurements: []Measurement{}})
	if got, err := Save(path, wider); err != nil || got != path {
		t.Errorf("wider run saved to %s (%v)", got, err)
	}
	part := sample(t)
	part.Partial = true
	p2 := filepath.Join(t.TempDir(), "r.json")
	if err := Write(p2, part); err != nil {
		t.Fatal(err)
	}
	if got, err := Save(p2, sample(t)); err != nil || got != p2 {
		t.Errorf("replacing a partial file: %s, %v", got, err)
	}
}

func TestReadRefusesOddFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{
		dir:         "not a regular file",
		big:         "at most",
		os.DevNull:  "not a regular file",
		"/dev/zero": "not a regular file",
	} {
		if _, err := os.Stat(path); err != nil {
			continue // no /dev/zero here
		}
		_, err := Read(path)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Read(%s) = %v, want one line saying %q", path, err, want)
		}
	}
}
