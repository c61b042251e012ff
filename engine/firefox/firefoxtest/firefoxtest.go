// Package firefoxtest is what end-to-end tests against real Firefox
// share: finding the browser, or skipping without it.
package firefoxtest

import (
	"os"
	"testing"

	"github.com/wdext/wdext/engine/firefox"
	"github.com/wdext/wdext/internal/e2e"
)

// Require skips the test when Firefox is missing (see e2e.Require) and
// returns its path ($WDEXT_FIREFOX, else firefox.Find's).
func Require(t testing.TB) string {
	t.Helper()
	bin, err := firefox.Find(os.Getenv("WDEXT_FIREFOX"))
	if err == nil {
		_, err = os.Stat(bin)
	}
	e2e.Require(t, "firefox-esr", err)
	return bin
}
