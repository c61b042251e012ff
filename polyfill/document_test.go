package polyfill

import (
	"net/http"
	"testing"
)

func TestInjectAfterPrologue(t *testing.T) {
	s := []byte("<script>X</script>")
	for _, c := range []struct{ in, want string }{
		{"<!DOCTYPE html><p>", "<!DOCTYPE html><script>X</script><p>"},
		{"\xef\xbb\xbf\n<!-- a -->\n<!doctype html>\n<title>", "\xef\xbb\xbf\n<!-- a -->\n<!doctype html><script>X</script>\n<title>"},
		{"<html><head>", "<script>X</script><html><head>"},
		{"", "<script>X</script>"},
		{"  <!-- unterminated", "  <script>X</script><!-- unterminated"},
	} {
		if got := string(InjectScript([]byte(c.in), s)); got != c.want {
			t.Errorf("InjectScript(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJSProfilingAllowed(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{"js-profiling"}, true},
		{[]string{"js-profiling=?1"}, true},
		{[]string{"js-profiling=?0"}, false},
		{[]string{"oversized-images=2.0, js-profiling"}, true},
		{[]string{"js-profiling;report-to=x"}, true},
		{[]string{"js-profilingx"}, false},
		{[]string{"a=1", "js-profiling"}, true},
		{[]string{"js-profiling", "js-profiling=?0"}, false},
	} {
		h := http.Header{}
		for _, v := range c.values {
			h.Add("Document-Policy", v)
		}
		if got := JSProfilingAllowed(h); got != c.want {
			t.Errorf("%q: %v, want %v", c.values, got, c.want)
		}
	}
}

func TestInjectPolicy(t *testing.T) {
	h := http.Header{"Document-Policy": {"js-profiling"}}
	got := string(InjectPolicy([]byte("<!doctype html><p>"), h))
	want := "<!doctype html><script>" + SetPolicyScript(true) + "</script><p>"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
