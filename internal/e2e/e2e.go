package e2e

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/tebeka/selenium"

	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
)

// Require skips the test under -short, and when the browser is missing
// (err says why), unless WDEXT_REQUIRE_BROWSER is set (CI), where a
// missing browser fails it.
func Require(t testing.TB, what string, err error) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short runs no browser (the unit tests, as make race runs them)")
	}
	if err != nil {
		if os.Getenv("WDEXT_REQUIRE_BROWSER") != "" {
			t.Fatalf("%s required: %v", what, err)
		}
		t.Skipf("needs %s: %v", what, err)
	}
}

// Serve runs a wdext server in front of m's upstream, with the commands
// and extensions given, until the test ends, when it deletes the sessions
// and closes the upstream.
func Serve(t testing.TB, m kind.Managed, commands []kind.Command, extensions ...func(*webdriver.Server)) (*webdriver.Server, string) {
	up := m.Upstream
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: up,
		Sessions: session.NewRegistry(),
		Defaults: m.Defaults,
		Guard:    webdriver.Guard{MaxBody: 64 << 20},
		Log:      log,
	})
	for _, c := range commands {
		srv.Handle(c.Method, c.Path, c.Run)
	}
	for _, register := range extensions {
		register(srv)
	}
	// As wdext serve does: net/http's own refusals in W3C JSON.
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = webdriver.ErrorListener(hs.Listener)
	hs.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
		up.Close()
	})
	return srv, hs.URL
}

// Session opens a Selenium session at base and deletes it when the test
// ends.
func Session(t testing.TB, base string, caps selenium.Capabilities) selenium.WebDriver {
	t.Helper()
	wd, err := selenium.NewRemote(caps, base)
	if err != nil {
		t.Fatalf("new session at %s: %v", base, err)
	}
	t.Cleanup(func() { wd.Quit() })
	return wd
}

// Pages serves dir on four origins that browsers treat as four sites,
// so frames and windows on different ones live in different processes:
// A http://127.0.0.1:P, B http://localhost:Q, C http://127.0.0.2:R and
// D http://127.0.0.3:S. Every document gets Document-Policy: js-profiling,
// and COOP/COEP (cross-origin isolation) when the query has ?isolated.
type Pages struct {
	A, B, C, D string
}

// ServePages starts the origins for dir; mounts (path → handler, a
// trailing slash for a subtree) are served on every origin.
func ServePages(t testing.TB, dir string, mounts map[string]http.Handler) *Pages {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", pageHandler(dir))
	for p, mh := range mounts {
		mux.Handle(p, mh)
	}
	h := http.Handler(mux)
	serve := func(ip, name string) string {
		l, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Fatalf("listening on %s: %v", ip, err)
		}
		s := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
		s.Start()
		t.Cleanup(s.Close)
		return "http://" + name + ":" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	return &Pages{
		A: serve("127.0.0.1", "127.0.0.1"),
		B: serve("127.0.0.1", "localhost"),
		C: serve("127.0.0.2", "127.0.0.2"),
		D: serve("127.0.0.3", "127.0.0.3"),
	}
}

func pageHandler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Document-Policy", "js-profiling")
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Query().Has("isolated") {
			w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
			w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
		}
		// Embeddable from the other origin under COEP.
		w.Header().Set("Cross-Origin-Resource-Policy", "cross-origin")
		files.ServeHTTP(w, r)
	})
}

// Testdata is the repository's testdata directory.
func Testdata(elem ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", "..", "testdata"}, elem...)...)
}
