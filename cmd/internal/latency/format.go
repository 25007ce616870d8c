package latency

import (
	"errors"
	"fmt"
	"strings"
)

// Format is the matrix format ReadFile reads, in one line.
const Format = "plain CSV without a header, N rows for N CPUs, row i holding the one-way ns to CPUs 0..i-1 " +
	"and the diagonal and upper triangle empty (docs/model.md, Latency matrix files), or latency --json output"

// FormatError is ReadFile's error for a file it could read that holds no
// matrix in Format: Err says what is wrong with the content.
type FormatError struct {
	Path string
	Err  error
}

func (e *FormatError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns what is wrong with the content.
func (e *FormatError) Unwrap() error { return e.Err }

// NotAMatrix says, when err is a *FormatError, that the file given by
// flag ("" names the file alone) is not a latency matrix and what Format
// is accepted; other errors (a missing file, not a regular file, too
// large) come back as they are.
func NotAMatrix(flag, path string, err error) error {
	var fe *FormatError
	if !errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("%s is not a latency matrix (want %s): %s", strings.TrimSpace(flag+" "+path), Format, fe.Err)
}
