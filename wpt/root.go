package wpt

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// RootMarker is the file that makes a directory a WPT root for [FindRoot]
// when it has no resources/testharness.js of its own: an empty file at the
// top of a WPT-style tree (the bundled testdata/wpt has one).
const RootMarker = ".wdext-wpt-root"

// FindRoot returns the WPT root that holds path (a file or directory, which
// need not exist: its nearest existing ancestor is where the search starts),
// as an absolute path: the nearest directory at or above it that holds
// resources/testharness.js (a WPT checkout) or a [RootMarker] file. It
// returns "" when there is none. Test IDs are paths below the root, so a
// test keeps its ID whichever subdirectory or file of the tree is run.
func FindRoot(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err == nil && fi.IsDir():
			if isRoot(d) {
				return d, nil
			}
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotDir(err):
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

func isRoot(dir string) bool {
	for _, marker := range []string{filepath.Join("resources", "testharness.js"), RootMarker} {
		if fi, err := os.Stat(filepath.Join(dir, marker)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// isNotDir reports an error from stat-ing below a file ("a.html/x").
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
