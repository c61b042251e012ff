package wpt

import (
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

const harness = `<script src="/resources/testharness.js"></script>`

var discoveryTree = map[string]string{
	"js-self-profiling/a.https.html": "<!doctype html>\n<META name=timeout content=LONG>\n" + harness +
		"\n<script src='/resources/testdriver.js'></script>",
	"js-self-profiling/b.html":                  "<SCRIPT SRC=\"/resources/testharness.js\"></SCRIPT>",
	"js-self-profiling/c.htm":                   "<meta name=\"timeout\" content=\"normal\">\n" + harness,
	"js-self-profiling/d.xhtml":                 `<html xmlns="http://www.w3.org/1999/xhtml">` + harness + `</html>`,
	"js-self-profiling/v.html":                  `<meta name="variant" content="?1-10"><meta name="variant" content="?11-20">` + harness,
	"js-self-profiling/notest.html":             "<p>no harness</p>",
	"js-self-profiling/commented.html":          "<!-- " + harness + " -->",
	"js-self-profiling/in-script.html":          "<script>document.write('" + harness + "')</script>",
	"js-self-profiling/relative.html":           `<script src="resources/testharness.js"></script>`,
	"js-self-profiling/thing-manual.html":       harness,
	"js-self-profiling/thing-manual.https.html": harness,
	"js-self-profiling/thing-visual.html":       harness,
	"js-self-profiling/thing-crash.html":        harness,
	"js-self-profiling/thing-ref.html":          "<p>a reference</p>",
	"js-self-profiling/.hidden.html":            harness,
	"js-self-profiling/a.https.html.headers":    "Document-Policy: js-profiling",
	"js-self-profiling/resources/child.html":    harness,
	"js-self-profiling/support/s.html":          harness,
	"js-self-profiling/crashtests/x.html":       harness,
	"js-self-profiling/.git/y.html":             harness,
	"js-self-profiling/profile.txt":             "not a test",
	"common/helper.html":                        harness,
	"tools/t.html":                              harness,
	"top.html":                                  harness,

	"measure-memory/m.tentative.window.js": "// META: script=/common/get-host-info.sub.js\n// META: timeout=long\ntest(() => {});",
	"measure-memory/n.any.js":              "// META: title=n\ntest(() => {});",
	"measure-memory/o.https.any.js":        "// META: global=window,worker\n// META: variant=?a\n// META: variant=#b\n",
	"measure-memory/p.any.js":              "// META: global=dedicatedworker, jsshell\n// META: script=/resources/testdriver.js\n",
	"measure-memory/w.worker.js":           "importScripts('/resources/testharness.js');\n// META: timeout=long\n",
	"measure-memory/plain.js":              "// META: timeout=long\n",
	"measure-memory/resources/r.any.js":    "",
}

func TestDiscoverTree(t *testing.T) {
	root := writeTree(t, discoveryTree)
	tests, err := Discover(root, nil)
	assert.NilError(t, err)
	assert.DeepEqual(t, tests, []Test{
		{URL: "/js-self-profiling/a.https.html", File: "js-self-profiling/a.https.html", LongTimeout: true, Testdriver: true},
		{URL: "/js-self-profiling/b.html", File: "js-self-profiling/b.html"},
		{URL: "/js-self-profiling/c.htm", File: "js-self-profiling/c.htm"},
		{URL: "/js-self-profiling/d.xhtml", File: "js-self-profiling/d.xhtml"},
		{URL: "/js-self-profiling/v.html?1-10", File: "js-self-profiling/v.html"},
		{URL: "/js-self-profiling/v.html?11-20", File: "js-self-profiling/v.html"},
		{URL: "/measure-memory/m.tentative.window.html", File: "measure-memory/m.tentative.window.js", LongTimeout: true},
		{URL: "/measure-memory/n.any.html", File: "measure-memory/n.any.js"},
		{URL: "/measure-memory/n.any.worker.html", File: "measure-memory/n.any.js"},
		{URL: "/measure-memory/o.https.any.html#b", File: "measure-memory/o.https.any.js"},
		{URL: "/measure-memory/o.https.any.html?a", File: "measure-memory/o.https.any.js"},
		{URL: "/measure-memory/o.https.any.serviceworker.html#b", File: "measure-memory/o.https.any.js"},
		{URL: "/measure-memory/o.https.any.serviceworker.html?a", File: "measure-memory/o.https.any.js"},
		{URL: "/measure-memory/o.https.any.sharedworker.html#b", File: "measure-memory/o.https.any.js"},
		{URL: "/measure-memory/o.https.any.sharedworker.html?a", File: "measure-memory/o.https.any.js"},
		{URL: "/measure-memory/o.https.any.worker.html#b", File: "measure-memory/o.https.any.js"},
		{URL: "/measure-memory/o.https.any.worker.html?a", File: "measure-memory/o.https.any.js"},
		{URL: "/measure-memory/p.any.worker.html", File: "measure-memory/p.any.js", Testdriver: true},
		{URL: "/measure-memory/w.worker.html", File: "measure-memory/w.worker.js"},
		{URL: "/top.html", File: "top.html"},
	})
}

func TestDiscoverPaths(t *testing.T) {
	root := writeTree(t, discoveryTree)
	for _, tc := range []struct {
		paths []string
		want  []string
	}{
		{[]string{"js-self-profiling/b.html"}, []string{"/js-self-profiling/b.html"}},
		{[]string{"/js-self-profiling/b.html", "js-self-profiling/b.html"}, []string{"/js-self-profiling/b.html"}},
		{[]string{"measure-memory/n.any.js"}, []string{"/measure-memory/n.any.html", "/measure-memory/n.any.worker.html"}},
		{[]string{"measure-memory/n.any.worker.html"}, []string{"/measure-memory/n.any.worker.html"}},
		{[]string{"measure-memory/o.https.any.html?a"}, []string{"/measure-memory/o.https.any.html?a"}},
		{[]string{"js-self-profiling/v.html?11-20"}, []string{"/js-self-profiling/v.html?11-20"}},
		{[]string{"measure-memory/o.https.any.worker.html"}, []string{"/measure-memory/o.https.any.worker.html#b", "/measure-memory/o.https.any.worker.html?a"}},
		{[]string{"measure-memory/", "js-self-profiling/b.html"}, []string{
			"/js-self-profiling/b.html",
			"/measure-memory/m.tentative.window.html", "/measure-memory/n.any.html", "/measure-memory/n.any.worker.html",
			"/measure-memory/o.https.any.html#b", "/measure-memory/o.https.any.html?a",
			"/measure-memory/o.https.any.serviceworker.html#b", "/measure-memory/o.https.any.serviceworker.html?a",
			"/measure-memory/o.https.any.sharedworker.html#b", "/measure-memory/o.https.any.sharedworker.html?a",
			"/measure-memory/o.https.any.worker.html#b", "/measure-memory/o.https.any.worker.html?a",
			"/measure-memory/p.any.worker.html", "/measure-memory/w.worker.html",
		}},
	} {
		assert.Check(t, is.DeepEqual(urls(t, root, tc.paths...), tc.want), "%q", tc.paths)
	}
	assert.Check(t, is.DeepEqual(urls(t, root, filepath.Join(root, "js-self-profiling", "b.html")),
		[]string{"/js-self-profiling/b.html"}), "an absolute file name inside the root")
	assert.Check(t, is.Len(urls(t, root, root), 20), "the root itself")

	for _, bad := range []string{
		"nope", "js-self-profiling/notest.html", "js-self-profiling/resources/child.html",
		"js-self-profiling/resources", "measure-memory/p.any.html", "js-self-profiling/b.html?nope",
	} {
		_, err := Discover(root, []string{bad})
		assert.Check(t, err != nil, "Discover(%q) should fail", bad)
	}
	_, err := Discover(writeTree(t, map[string]string{"d/v.html": `<meta name=variant content="x">` + harness}), nil)
	assert.Check(t, is.ErrorContains(err, "must start with ? or #"))
}

func urls(t *testing.T, root string, paths ...string) []string {
	t.Helper()
	tests, err := Discover(root, paths)
	assert.NilError(t, err, "%q", paths)
	var out []string
	for _, tt := range tests {
		out = append(out, tt.URL)
	}
	return out
}

func TestTimeouts(t *testing.T) {
	for _, tc := range []struct {
		test Test
		mult float64
		want time.Duration
	}{
		{Test{}, 1, 10 * time.Second},
		{Test{}, 0, 10 * time.Second},
		{Test{LongTimeout: true}, 1, 60 * time.Second},
		{Test{}, 2.5, 25 * time.Second},
		{Test{LongTimeout: true}, 3, 180 * time.Second},
	} {
		assert.Check(t, is.Equal(tc.test.Timeout(tc.mult), tc.want), "%+v × %v", tc.test, tc.mult)
	}
}

func TestScanHTMLOddities(t *testing.T) {
	f := scanHTML([]byte(`<p title="a > b"><script type=module src = '/resources/testharness.js' defer></script>` +
		`<meta name=timeout content=long><meta name=timeout content=normal><script src="/resources/testdriver.js"/>`))
	assert.Check(t, f.testharness && f.testdriver && f.long, "%+v", f)
	f = scanHTML([]byte(`<script>var s = "<script src=/resources/testharness.js>"</SCRIPT >`))
	assert.Check(t, !f.testharness, "script contents are not markup")
	f = scanHTML([]byte(`<style>a{}</style><script src="/resources/testharness.js&#x20;">`))
	assert.Check(t, !f.testharness, "attribute values are compared exactly, after entity decoding")
}
