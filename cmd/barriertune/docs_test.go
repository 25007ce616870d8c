package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/barriertune/barriertune/cmd/internal/clidoc"
)

// TestDocsCurrent fails when docs/cli.md or docs/man/ differ from what
// the commands generate: run `go generate ./cmd/barriertune` after
// changing a command.
func TestDocsCurrent(t *testing.T) {
	files, err := clidoc.Generate(testRootCmd())
	if err != nil {
		t.Fatal(err)
	}
	docs := filepath.Join("..", "..", "docs")
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(docs, name))
		if err != nil {
			t.Errorf("%v; run `go generate ./cmd/barriertune`", err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/%s is stale; run `go generate ./cmd/barriertune`", name)
		}
	}
	pages, _ := filepath.Glob(filepath.Join(docs, "man", "barriertune*.1"))
	for _, p := range pages {
		if _, ok := files[filepath.Join("man", filepath.Base(p))]; !ok {
			t.Errorf("%s belongs to no command; run `go generate ./cmd/barriertune`", p)
		}
	}
	for _, want := range []string{"cli.md", "man/barriertune.1", "man/barriertune-check.1", "man/barriertune-bench.1"} {
		if _, ok := files[filepath.FromSlash(want)]; !ok {
			t.Errorf("no %s generated; have %v", want, slices.Sorted(maps.Keys(files)))
		}
	}
	if !bytes.Contains(files["cli.md"], []byte("130 interrupted by SIGINT")) || !bytes.Contains(files["cli.md"], []byte("### barriertune check")) {
		t.Errorf("cli.md lacks the exit codes or the check command")
	}
}
