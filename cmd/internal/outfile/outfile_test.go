package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrite: a new file and a replaced one hold the data with the mode
// asked for, whatever the umask, and nothing else is left in the directory.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.csv")
	for _, data := range []string{"first\n", "second, longer\n"} {
		if err := Write("table", p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != data {
			t.Fatalf("after writing %q: %q, %v", data, got, err)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", fi.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the file alone", len(entries))
	}
}

// TestRefused: what is not a regular file, a dangling link, a missing or
// non-directory parent are refused with the path and the reason, and left
// as they were.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "none", "x"), dangling); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		dir:                             "is a directory",
		dangling:                        "is a symbolic link to nothing",
		loop:                            "loop",
		filepath.Join(dir, "none", "x"): "directory " + filepath.Join(dir, "none") + " does not exist",
		filepath.Join(file, "x"):        "not a directory",
	}
	if fi, err := os.Stat(os.DevNull); err == nil && !fi.Mode().IsRegular() {
		link := filepath.Join(dir, "null")
		if err := os.Symlink(os.DevNull, link); err != nil {
			t.Fatal(err)
		}
		cases[link] = "is not a regular file (it is a character device)"
	}
	for p, want := range cases {
		err := Write("table", p, []byte("new"), 0o644)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("Write(%s): %v, want an error naming it and %q", p, err, want)
		}
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the dangling link was replaced")
	}
	if got, _ := os.ReadFile(file); string(got) != "keep" {
		t.Errorf("the file beside them holds %q", got)
	}
}
