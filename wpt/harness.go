package wpt

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The testharness.js wdext serves to trees without their own: the one the
// npm package wpt-runner ships, pinned to a version and checked against its
// hashes, fetched once per user by [InstallTestharness] (`wdext setup`).
const (
	HarnessPackage = "wpt-runner@7.0.0"
	harnessTarball = "wpt-runner/-/wpt-runner-7.0.0.tgz"
	// harnessIntegrity is the registry's dist.integrity of the tarball.
	harnessIntegrity = "sha512-hMFl9Dwlc8cztxhm0y2SjLA9LmZdLk5w5ySLpDFNgPh37zjzgjaTvxsyMUSkrVFSW8eVc3qQhyNm3wK83+VqVQ=="
	harnessInTarball = "package/testharness/testharness.js"
	// harnessSHA256 is testharness.js's own hash, which a copy found on
	// the machine (scripts/deps.sh's in .cache/) must have too.
	harnessSHA256 = "d2399236c2a09c429804ff2299ad6629e17e2b53f17a74dd341e936adb11ae3e"
	// DefaultRegistry is where InstallTestharness fetches the package when
	// no registry is given and $npm_config_registry is unset.
	DefaultRegistry = "https://registry.npmjs.org/"
)

// SetupCommand is the command that installs testharness.js for every tree
// without its own, as error messages tell it.
const SetupCommand = "wdext setup"

// CachedTestharness is where InstallTestharness puts testharness.js: the
// user's cache directory (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on
// Linux), wdext/wpt-runner-7.0.0/testharness.js.
func CachedTestharness() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no per-user cache directory: %w", err)
	}
	v := strings.ReplaceAll(HarnessPackage, "@", "-")
	return filepath.Join(dir, "wdext", v, "testharness.js"), nil
}

// checkoutHarnesses are where a checkout of wdext keeps wpt-runner's
// testharness.js (scripts/deps.sh), relative to a directory.
var checkoutHarnesses = []string{
	".cache/wpt-runner/package/testharness/testharness.js",
	"node_modules/wpt-runner/testharness/testharness.js",
}

// findCheckoutHarness looks for wpt-runner's testharness.js in starts or
// their parent directories. Only the pinned version counts: another
// project's node_modules may hold another wpt-runner.
func findCheckoutHarness(starts ...string) ([]byte, string) {
	for _, start := range starts {
		for d := start; ; d = filepath.Dir(d) {
			for _, rel := range checkoutHarnesses {
				name := filepath.Join(d, filepath.FromSlash(rel))
				if b, err := os.ReadFile(name); err == nil && sha256Hex(b) == harnessSHA256 {
					return b, name
				}
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return nil, ""
}

// readCachedHarness returns the installed testharness.js, if any (and
// intact).
func readCachedHarness() ([]byte, error) {
	name, err := CachedTestharness()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(name)
	if err == nil && sha256Hex(b) != harnessSHA256 {
		return nil, fmt.Errorf("%s is not %s's testharness.js (its hash differs): run `%s` again", name, HarnessPackage, SetupCommand)
	}
	return b, err
}

// errNoHarness says how to get a testharness.js.
func errNoHarness(root string) error {
	where, err := CachedTestharness()
	if err != nil {
		where = "your cache directory"
	}
	return fmt.Errorf("no testharness.js for %s (it has no resources/testharness.js): run `%s` once "+
		"(fetches the npm package %s's testharness.js into %s), or pass --testharness FILE", root, SetupCommand, HarnessPackage, where)
}

// InstallTestharness puts wpt-runner's testharness.js at CachedTestharness
// and returns that path. It copies a copy found on the machine (a wdext
// checkout's .cache/ or node_modules/ in the working directory or above)
// when that has the pinned hash, and otherwise fetches the package's
// tarball from registry ("" means $npm_config_registry, else
// DefaultRegistry) with the default HTTP client (which honours
// $HTTPS_PROXY), checks it against the registry's integrity hash, and
// extracts testharness.js. Messages about what it does go to log.
func InstallTestharness(ctx context.Context, registry string, log io.Writer) (string, error) {
	dest, err := CachedTestharness()
	if err != nil {
		return "", err
	}
	if b, err := os.ReadFile(dest); err == nil && sha256Hex(b) == harnessSHA256 {
		fmt.Fprintf(log, "testharness.js (%s) is already in %s\n", HarnessPackage, dest)
		return dest, nil
	}
	var body []byte
	wd, _ := os.Getwd()
	if b, name := findCheckoutHarness(wd); b != nil && sha256Hex(b) == harnessSHA256 {
		fmt.Fprintf(log, "copying %s's testharness.js from %s\n", HarnessPackage, name)
		body = b
	} else {
		if body, err = fetchHarness(ctx, registry, log); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".testharness-*.js")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "installed testharness.js (%s) in %s\n", HarnessPackage, dest)
	return dest, nil
}

func fetchHarness(ctx context.Context, registry string, log io.Writer) ([]byte, error) {
	if registry == "" {
		registry = os.Getenv("npm_config_registry")
	}
	if registry == "" {
		registry = DefaultRegistry
	}
	url := strings.TrimSuffix(registry, "/") + "/" + harnessTarball
	fmt.Fprintf(log, "fetching %s\n", url)
	// A registry that accepts the connection and never answers must not
	// hang setup.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("registry %q: %w", registry, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w (behind a proxy? set HTTPS_PROXY; another registry: --registry URL)", HarnessPackage, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: %s answered %s", HarnessPackage, url, resp.Status)
	}
	const maxTarball = 16 << 20 // the package is about 100 KiB
	tgz, err := io.ReadAll(io.LimitReader(resp.Body, maxTarball+1))
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", HarnessPackage, err)
	}
	if len(tgz) > maxTarball {
		return nil, fmt.Errorf("fetching %s: %s sent more than %d MiB, not the package", HarnessPackage, url, maxTarball>>20)
	}
	sum := sha512.Sum512(tgz)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != harnessIntegrity {
		return nil, fmt.Errorf("%s from %s has integrity %s, not the package's %s", HarnessPackage, url, got, harnessIntegrity)
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", HarnessPackage, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s has no %s", HarnessPackage, harnessInTarball)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", HarnessPackage, err)
		}
		if h.Name != harnessInTarball {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", HarnessPackage, err)
		}
		if sha256Hex(b) != harnessSHA256 {
			return nil, fmt.Errorf("%s's %s is not the expected file (sha256 %s)", HarnessPackage, harnessInTarball, sha256Hex(b))
		}
		return b, nil
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
