package e2e

import (
	"context"
	"os"
	"testing"

	"github.com/wdext/wdext/wpt"
)

// WPTServer serves the WPT-style tree root as wdext wpt does until the
// test ends, with the testharness.js to serve; it skips the test when
// there is none (unless browsers are required).
func WPTServer(t testing.TB, root string) (*wpt.Server, []byte) {
	t.Helper()
	th, err := wpt.FindTestharness("", root)
	if err != nil {
		if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	srv, err := wpt.NewServer(root, wpt.Options{MainHost: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, th
}
