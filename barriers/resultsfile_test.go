package barriers

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/barriertune/barriertune/results"
)

// writeResults writes f to path as the check does (indented JSON, Schema
// filled in), for the tests that give Auto and Tuned a results file. The
// writing side is cmd/internal/store's, which a package outside cmd/
// cannot import: a library links only the reading side.
func writeResultsFile(path string, f *results.File) error {
	if f.Schema == "" {
		f.Schema = results.Schema
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
