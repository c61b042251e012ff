package webdriver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
)

// BenchmarkServeClassic is wdext's own cost for a classic command, in
// process and without a network: routing, guard, logging and the proxy,
// in front of an upstream transport that answers at once.
func BenchmarkServeClassic(b *testing.B) {
	srv := webdriver.NewServer(webdriver.Config{
		Upstream:  driver.Remote{URL: &url.URL{Scheme: "http", Host: "127.0.0.1:9515"}},
		Transport: instantTransport{},
		Log:       quietLog(),
		Guard:     webdriver.Guard{MaxBody: 256 << 20},
	})
	for _, path := range []string{"/session/abc/execute/sync", "/session/abc/element/e1/click", "/session/abc/nope"} {
		b.Run(strings.ReplaceAll(path[1:], "/", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", path, strings.NewReader(`{"script":"return 1","args":[]}`))
				req.Host = "127.0.0.1:4444"
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

type instantTransport struct{}

func (instantTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	return &http.Response{
		StatusCode:    200,
		Header:        http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		Body:          io.NopCloser(strings.NewReader(`{"value":1}`)),
		ContentLength: 11,
		Request:       r,
	}, nil
}

// BenchmarkForwardLoopback is what wdext adds to a classic command over
// real connections, in front of an upstream that answers at once: the
// same call straight to that upstream and through wdext (its guard,
// routing, session lookup and proxy), in turn. It reports the p50 and p99
// of the difference, in microseconds; no browser, little noise.
func BenchmarkForwardLoopback(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", "11")
		io.WriteString(w, `{"value":1}`)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	srv := webdriver.NewServer(webdriver.Config{
		Upstream: driver.Remote{URL: u},
		Log:      quietLog(),
		Guard:    webdriver.Guard{MaxBody: 256 << 20},
	})
	// As wdext serve runs it.
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = webdriver.ErrorListener(hs.Listener)
	hs.Config.ReadHeaderTimeout = 10 * time.Second
	hs.Config.IdleTimeout = 2 * time.Minute
	hs.Start()
	defer hs.Close()
	direct := newExecuteSync(up.URL, "s1")
	via := newExecuteSync(hs.URL, "s1")
	b.ReportAllocs()
	interleave(b, direct, via)
	added := func(p float64) float64 {
		return float64(percentile(via.lat, p)-percentile(direct.lat, p)) / float64(time.Microsecond)
	}
	b.ReportMetric(added(50), "added-p50-us")
	b.ReportMetric(added(99), "added-p99-us")
	b.ReportMetric(float64(percentile(direct.lat, 50))/float64(time.Microsecond), "direct-p50-us")
}
