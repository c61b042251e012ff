package webdriver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

var decodeSeeds = []string{
	``, `{}`, ` {"script":"return 1","args":[]} `, `[]`, `null`, `{`, `{"a":1}{}`,
	`{"script":1}`, `{"args":{"x":[1,2,{"y":null}]}}`, `{"n":1e400}`, `{"n":-0.0}`,
	`{"s":"\ud800"}`, "{\"s\":\"\xff\"}", `{"a":{"b":{"c":{"d":[[[[]]]]}}}}`, `{"":""}`,
	`{"script":"x","args":[],"extra":true}`, `{} `, "{}\x00",
}

// DecodeArgs never panics; it fails only with "invalid argument", and what
// it accepts is a JSON object (or nothing at all).
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	type params struct {
		Script string         `json:"script"`
		Args   []any          `json:"args"`
		N      float64        `json:"n"`
		Nested map[string]any `json:"nested"`
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []any{&map[string]any{}, &params{}, &struct{}{}} {
			err := webdriver.DecodeArgs(body, v)
			if err == nil {
				trimmed := bytes.TrimSpace(body)
				if len(trimmed) > 0 && (trimmed[0] != '{' || !json.Valid(trimmed)) {
					t.Fatalf("accepted %q into %T", body, v)
				}
				continue
			}
			var we *wire.Error
			if !errors.As(err, &we) || we.Code != wire.InvalidArgument {
				t.Fatalf("%q into %T: %T %v, want invalid argument", body, v, err, err)
			}
		}
	})
}

// captured is what a fuzzed new session sent upstream.
type captured struct {
	mu   sync.Mutex
	body []byte
	n    int
}

// roundTrip is an in-memory driver: it notes the new-session body and
// refuses the session, so nothing is registered.
type roundTrip struct{ c *captured }

func (rt roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	rt.c.mu.Lock()
	rt.c.body, rt.c.n = body, rt.c.n+1
	rt.c.mu.Unlock()
	return &http.Response{
		StatusCode: 500,
		Header:     http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		Body:       io.NopCloser(strings.NewReader(`{"value":{"error":"session not created","message":"fuzz","stacktrace":""}}`)),
		Request:    r,
	}, nil
}

// The new-session path (decoding, capability defaults, re-encoding) never
// panics; a body it cannot use is "invalid argument" and goes nowhere; a
// body it forwards is a JSON object that still holds the client's binary
// and switches.
func FuzzNewSessionBody(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"capabilities":{"alwaysMatch":{"browserName":"chrome"}}}`,
		`{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":"/x","args":["--headless","--foo=1",3,null]}}}}`,
		`{"capabilities":{"firstMatch":[{"goog:chromeOptions":{}},{"goog:chromeOptions":null},7,{"browserName":"firefox"}]}}`,
		`{"capabilities":{"firstMatch":{}},"desiredCapabilities":{"goog:chromeOptions":{"args":"x"}}}`,
		`{"desiredCapabilities":{"browserName":"chrome"}}`,
		`{"capabilities":null,"desiredCapabilities":[]}`,
		`{"capabilities":{"alwaysMatch":{"timeouts":{"script":1e3,"pageLoad":12345678901234567890}}}}`,
		`{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{"binary":null,"args":[]}}}}`,
	} {
		f.Add([]byte(s))
	}
	c := &captured{}
	u, _ := url.Parse("http://127.0.0.1:9")
	srv := webdriver.NewServer(webdriver.Config{
		Upstream:  managed{u},
		Defaults:  testDefaults,
		Transport: roundTrip{c},
		Log:       quietLog(),
	})
	f.Fuzz(func(t *testing.T, body []byte) {
		c.mu.Lock()
		before := c.n
		c.mu.Unlock()
		req := httptest.NewRequest("POST", "/session", bytes.NewReader(body))
		req.Host = "127.0.0.1:4444"
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		c.mu.Lock()
		forwarded, sent := c.n > before, c.body
		c.mu.Unlock()

		if !forwarded {
			e, ok := wire.ParseError(rec.Body.Bytes())
			if !ok || e.Code != wire.InvalidArgument || rec.Code != 400 {
				t.Fatalf("%q not forwarded, reply %d %s", body, rec.Code, rec.Body)
			}
			return
		}
		if rec.Code != 500 {
			t.Fatalf("%q: the driver's refusal became %d %s", body, rec.Code, rec.Body)
		}
		var in, out map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&in); err != nil || in == nil {
			t.Fatalf("forwarded %q, which is not a JSON object", body)
		}
		dec = json.NewDecoder(bytes.NewReader(sent))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil || out == nil {
			t.Fatalf("sent upstream %q, which is not a JSON object (client sent %q)", sent, body)
		}
		// Every top-level member the client sent is still there, and the
		// client's own binary and switches are untouched.
		for k := range in {
			if _, ok := out[k]; !ok {
				t.Fatalf("member %q lost: %q → %q", k, body, sent)
			}
		}
		for _, path := range [][]string{
			{"capabilities", "alwaysMatch", "goog:chromeOptions"},
			{"desiredCapabilities", "goog:chromeOptions"},
		} {
			before, after := dig(in, path), dig(out, path)
			if before == nil {
				continue
			}
			if b, ok := before["binary"]; ok && !reflect.DeepEqual(after["binary"], b) {
				t.Fatalf("binary changed: %q → %q", body, sent)
			}
			if args, ok := before["args"].([]any); ok {
				got, _ := after["args"].([]any)
				if len(got) < len(args) || !reflect.DeepEqual(got[:len(args)], args) {
					t.Fatalf("client's args changed: %q → %q", body, sent)
				}
			}
		}
	})
}

// dig follows path through nested objects; nil if any step is missing.
func dig(m map[string]any, path []string) map[string]any {
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}
