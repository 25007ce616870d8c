package main

//go:generate go run . docs --dir ../../docs

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/barriertune/barriertune/cmd/internal/clidoc"
)

// docsOptions are the flags of the hidden `barriertune docs` command.
type docsOptions struct {
	dir  string
	root *cobra.Command // the command tree documented
}

func newDocsCmd() *cobra.Command {
	opts := &docsOptions{}
	cmd := &cobra.Command{
		Use:    "docs",
		Short:  "Write docs/cli.md and the man pages from the commands",
		Long:   "Write DIR/cli.md (the command reference) and DIR/man/barriertune*.1 (man pages) from the commands' help, so that they never drift from it. Run `go generate ./cmd/barriertune` after changing a command.",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.root = cmd.Root()
			return runDocs(cmd.Context(), opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&opts.dir, "dir", "docs", "the docs `DIR` to write into")
	return cmd
}

// runDocs writes the generated documentation into opts.dir.
func runDocs(_ context.Context, opts *docsOptions, _, _ io.Writer) error {
	return clidoc.Write(opts.dir, opts.root)
}
