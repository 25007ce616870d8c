package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
