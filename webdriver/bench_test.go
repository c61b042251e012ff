package webdriver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

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
