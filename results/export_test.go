package results

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// SitePathsForTest lets the external tests reach sitePaths.
var SitePathsForTest = sitePaths

// WriteForTest writes f to path as the check does (the writing side is
// cmd/internal/store's, which these tests cannot import): indented JSON,
// Schema filled in.
func WriteForTest(path string, f *File) error {
	if f.Schema == "" {
		f.Schema = Schema
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
