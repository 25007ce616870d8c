// Package outfile writes the files barriertune's commands produce (results,
// latency tables, plots): whole or not at all, and never over what is not
// a regular file. A path that names a device, a FIFO, a directory or a
// symbolic link that leads nowhere is refused before anything is written;
// otherwise the data goes to a hidden file beside the target, synced, and
// is renamed over it, so that a reader sees the old file or the new one,
// never a torn one, and an interrupted write leaves the old file as it was.
package outfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/barriertune/barriertune/internal/text"
)

// Check reports why path cannot take a new file, or nil: it exists and is
// not a regular file, or cannot be examined, or its directory does not
// exist or is not one. what names the file in errors ("latency table").
func Check(what, path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s %s is a directory; give a file's path", what, path)
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s %s is not a regular file (it is %s); give a path for a new file, or a regular file to replace", what, path, text.FileKind(fi.Mode()))
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %s: %w", what, path, errors.Unwrap(err))
	case err != nil:
		if _, lerr := os.Lstat(path); lerr == nil {
			return fmt.Errorf("%s %s is a symbolic link to nothing; give a path for a new file", what, path)
		}
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %s: directory %s does not exist; create it first or give another path", what, path, dir)
	case err != nil:
		return fmt.Errorf("%s %s: %w", what, path, err)
	case !di.IsDir():
		return fmt.Errorf("%s %s: %s is not a directory", what, path, dir)
	}
	return nil
}

// Write writes data to path with mode perm (less nothing: the umask does
// not apply, so a file meant for every user is readable by them), after
// Check, through a hidden file in the same directory renamed over path.
func Write(what, path string, data []byte, perm os.FileMode) error {
	if err := Check(what, path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := createTemp(dir, perm)
	if err != nil {
		return createError(what, path, dir, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s to %s: %w", what, tmp.Name(), err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s to %s: %w", what, tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing %s %s: %w", what, tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s to %s: %w", what, tmp.Name(), err)
	}
	// The path may have become something else while the data was written.
	if err := Check(what, path); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s %s: %w", what, path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// createError is Write's error when the file beside path cannot be
// created: a directory the user cannot write is named as such (the hidden
// file's name would say nothing to the user), other errors as they are.
func createError(what, path, dir string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("writing %s %s: directory %s is not writable by this user: give a path in a directory you can write: %w", what, path, dir, os.ErrPermission)
	}
	return fmt.Errorf("writing %s %s: %w", what, path, err)
}

// createTemp creates a new hidden file in dir with mode perm (umask
// applies until Write's Chmod); os.CreateTemp would make it 0600.
func createTemp(dir string, perm os.FileMode) (*os.File, error) {
	var err error
	for i := 0; i < 100; i++ {
		name := filepath.Join(dir, fmt.Sprintf(".barriertune-%d-%d.tmp", os.Getpid(), time.Now().UnixNano()+int64(i)))
		var f *os.File
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	return nil, err
}
