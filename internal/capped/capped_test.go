package capped

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := File{What: "test file", Hint: "give a small one", Limit: 5}
	if b, err := k.ReadFile(small); err != nil || string(b) != "12345" {
		t.Fatalf("ReadFile(5 bytes, limit 5) = %q, %v", b, err)
	}
	k.Limit = 4
	_, err := k.ReadFile(small)
	if err == nil || !strings.Contains(err.Error(), "test file "+small+" is 5 bytes; at most 4 bytes (4 bytes) are accepted") {
		t.Errorf("over the limit: %v", err)
	}
	_, err = k.ReadFile(filepath.Join(dir, "missing"))
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "test file: ") {
		t.Errorf("missing file: %v, want os.ErrNotExist wrapped with the kind", err)
	}
	for _, p := range []string{dir, os.DevNull} {
		_, err := k.ReadFile(p)
		if err == nil || !strings.Contains(err.Error(), "test file "+p+" is not a regular file") || !strings.HasSuffix(err.Error(), "; give a small one") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestLimitMisuse(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Limit 0 accepted")
		}
	}()
	File{}.Open(os.DevNull)
}

// TestReadDir: the cap, what it reports, and what is not a directory.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		n          int
		want       int
		wantedMore bool
	}{{1, 1, true}, {2, 2, true}, {3, 3, false}, {10, 3, false}} {
		got, more, err := ReadDir(dir, c.n)
		if err != nil || len(got) != c.want || more != c.wantedMore {
			t.Errorf("ReadDir(3 entries, %d) = %d entries, more %v, %v; want %d, %v", c.n, len(got), more, err, c.want, c.wantedMore)
		}
	}
	if _, _, err := ReadDir(filepath.Join(dir, "missing"), 5); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v, want os.ErrNotExist", err)
	}
	file := filepath.Join(dir, "a")
	if _, _, err := ReadDir(file, 5); err == nil || !strings.Contains(err.Error(), file+" is not a directory (it is a regular file)") {
		t.Errorf("a file: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("ReadDir with n 0 did not panic")
		}
	}()
	ReadDir(dir, 0)
}
