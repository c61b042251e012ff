package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Runnable returns why the driver binary path (found by the default
// lookup, or given as flag = explicit) cannot be run, or nil.
func Runnable(flag, explicit, path string) error {
	what := flag + " " + path
	if explicit == "" {
		what = path + " (found on $PATH or in /usr/bin; " + flag + " to choose another)"
	}
	if !strings.Contains(path, "/") {
		// A bare name, as exec.Command runs it: from $PATH.
		p, err := exec.LookPath(path)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		path = p
	}
	fi, err := os.Stat(path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%s: %w", what, pe.Err)
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case fi.IsDir():
		return fmt.Errorf("%s: is a directory", what)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: not a regular file (%v)", what, fi.Mode())
	}
	if err := syscall.Access(path, 1 /* X_OK */); err != nil {
		return fmt.Errorf("%s: not executable (%v): %w", what, fi.Mode(), err)
	}
	return nil
}

// Find returns the driver binary explicit if set, else name from $PATH,
// else /usr/bin/name; hint says how to get it when it is nowhere.
func Find(explicit, name, hint string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if p := "/usr/bin/" + name; isFile(p) {
		return p, nil
	}
	return "", fmt.Errorf("%s not found: %s", name, hint)
}

func isFile(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
