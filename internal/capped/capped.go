// Package capped reads regular files of bounded size: the one reader of
// results files, latency matrices, topology files and sysfs snapshots. A device (/dev/zero)
// or a FIFO is refused before it is opened (opening a FIFO blocks until a
// writer comes; a device may never end, and opening some has effects), a
// file larger than its cap is refused before it is read, and one that
// grows past the cap while being read stops there. A path swapped for
// something else between that check and the open is refused too: the
// open does not wait for a FIFO's writer (O_NONBLOCK where the system has
// it), and what was opened is checked again. ReadDir lists directories
// (sysfs snapshots, the results directories) the same way: what is not a
// directory is refused before it is opened, and the listing is capped.
package capped

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/barriertune/barriertune/internal/text"
)

// File names a kind of file in errors: What is put before the path ("results
// file"; empty for none) and Hint after the reason ("give a CSV file").
type File struct {
	What, Hint string
	// Limit is the largest size accepted, in bytes (at least 1).
	Limit int64
}

func (k File) name(path string) string {
	if k.What == "" {
		return path
	}
	return k.What + " " + path
}

func (k File) hint() string {
	if k.Hint == "" {
		return ""
	}
	return "; " + k.Hint
}

// Open opens path after checking it is a regular file of at most k.Limit
// bytes; reads past k.Limit bytes fail. Errors from os.Stat and os.Open are
// wrapped as "What: <err>" (the path is in them), so errors.Is(err,
// os.ErrNotExist) holds for a missing file.
func (k File) Open(path string) (io.ReadCloser, error) {
	if k.Limit < 1 {
		panic("capped: File.Limit must be at least 1")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, k.wrap(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (it is %s)%s", k.name(path), text.FileKind(fi.Mode()), k.hint())
	}
	if fi.Size() > k.Limit {
		return nil, k.tooLarge(path, fi.Size())
	}
	return k.openChecked(path, fi)
}

// openChecked opens path, which os.Stat just found to be fi (a regular
// file), without waiting for a FIFO's writer, and refuses what it opened
// unless that is still fi's file: the path may have been swapped since.
func (k File) openChecked(path string, fi os.FileInfo) (io.ReadCloser, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, k.wrap(err)
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, k.wrap(err)
	}
	if !got.Mode().IsRegular() || !os.SameFile(fi, got) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened (it is now %s); give a file nothing else replaces%s", k.name(path), text.FileKind(got.Mode()), k.hint())
	}
	if got.Size() > k.Limit {
		f.Close()
		return nil, k.tooLarge(path, got.Size())
	}
	return &reader{f: f, left: k.Limit, k: k, path: path}, nil
}

// ReadFile reads the whole of path, as Open checks it.
func (k File) ReadFile(path string) ([]byte, error) {
	r, err := k.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return data, nil
}

func (k File) wrap(err error) error {
	if k.What == "" {
		return err
	}
	return fmt.Errorf("%s: %w", k.What, err)
}

func (k File) tooLarge(path string, size int64) error {
	at := fmt.Sprintf("is %d bytes", size)
	if size < 0 {
		at = fmt.Sprintf("is over %d bytes", k.Limit)
	}
	return fmt.Errorf("%s %s; at most %d bytes (%s) are accepted", k.name(path), at, k.Limit, mib(k.Limit))
}

func mib(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// reader fails once more than the cap has been read.
type reader struct {
	f    *os.File
	left int64
	k    File
	path string
}

func (r *reader) Read(p []byte) (int, error) {
	if int64(len(p)) > r.left+1 {
		p = p[:r.left+1]
	}
	n, err := r.f.Read(p)
	r.left -= int64(n)
	if r.left < 0 {
		return n + int(r.left), r.k.tooLarge(r.path, -1)
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", r.k.name(r.path), err)
	}
	return n, err
}

func (r *reader) Close() error { return r.f.Close() }

// ReadDir lists at most n entries of the directory path (n at least 1), in
// the order the system gives them; more reports whether there were more.
// Anything but a directory is refused before it is opened (opening a FIFO
// to list it would wait for a writer), and the open does not wait either,
// so a path swapped for a FIFO after the check is refused too. Errors name
// the path; errors.Is(err, os.ErrNotExist) holds for a missing one.
func ReadDir(path string, n int) (entries []os.DirEntry, more bool, err error) {
	if n < 1 {
		panic("capped: ReadDir needs n of at least 1")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false, err
	}
	if !fi.IsDir() {
		return nil, false, fmt.Errorf("%s is not a directory (it is %s)", path, text.FileKind(fi.Mode()))
	}
	return readDirChecked(path, fi, n)
}

// readDirChecked is ReadDir once os.Stat has found path to be fi, a
// directory: it opens without waiting and lists only that directory.
func readDirChecked(path string, fi os.FileInfo, n int) (entries []os.DirEntry, more bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !got.IsDir() || !os.SameFile(fi, got) {
		return nil, false, fmt.Errorf("%s changed while it was opened (it is now %s)", path, text.FileKind(got.Mode()))
	}
	entries, err = f.ReadDir(n + 1)
	if err != nil && err != io.EOF {
		return nil, false, fmt.Errorf("listing %s: %w", path, err)
	}
	if len(entries) > n {
		return entries[:n], true, nil
	}
	return entries, false, nil
}

// IsDirPath reports whether path, given for a results file
// ($BARRIERTUNE_RESULTS, -o, a command's file argument), names a directory
// of machines' files: it ends in a slash ("/site/barriertune/"). A
// directory named without one is refused as a file would be.
func IsDirPath(path string) bool { return strings.HasSuffix(path, string(os.PathSeparator)) }
