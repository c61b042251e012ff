package wpt

import (
	"fmt"
	"strings"
)

// wrapper is one of the pages wptserve generates around a .js test
// (WrapperHandler and friends in tools/serve/serve.py). The templates are
// kept byte-compatible with wptserve's so tests see the same documents.
type wrapper struct {
	suffix   string // of the requested path
	source   string // replaces suffix to name the .js file on disk
	resource string // replaces suffix to name the URL the page loads
	// global is the META global variant the source must enable; "" for
	// wrappers that always exist.
	global      string
	contentType string
	// template uses wptserve's placeholders: %(meta)s, %(script)s,
	// %(path)s (the resource's URL path) and %(query)s ("?…" or "").
	template string
	worker   bool // scripts are imported with importScripts, not <script>
}

// Longer suffixes first: ".any.worker.html" also ends in ".worker.html".
var wrappers = []wrapper{
	{suffix: ".any.sharedworker.html", source: ".any.js", resource: ".any.worker.js", global: "sharedworker", contentType: "text/html", template: sharedWorkerPage},
	{suffix: ".any.serviceworker.html", source: ".any.js", resource: ".any.worker.js", global: "serviceworker", contentType: "text/html", template: serviceWorkerPage},
	{suffix: ".any.worker.html", source: ".any.js", resource: ".any.worker.js", global: "dedicatedworker", contentType: "text/html", template: dedicatedWorkerPage},
	{suffix: ".any.worker.js", source: ".any.js", resource: ".any.js", contentType: "text/javascript", template: workerScript, worker: true},
	{suffix: ".any.html", source: ".any.js", resource: ".any.js", global: "window", contentType: "text/html", template: anyWindowPage},
	{suffix: ".window.html", source: ".window.js", resource: ".window.js", contentType: "text/html", template: windowPage},
	{suffix: ".worker.html", source: ".worker.js", resource: ".worker.js", global: "dedicatedworker", contentType: "text/html", template: dedicatedWorkerPage},
}

// wrapperFor returns the wrapper generating urlPath, if any.
func wrapperFor(urlPath string) (wrapper, bool) {
	for _, w := range wrappers {
		if strings.HasSuffix(urlPath, w.suffix) {
			return w, true
		}
	}
	return wrapper{}, false
}

// exposed reports whether the source's META global enables this wrapper;
// wptserve answers 404 otherwise.
func (w wrapper) exposed(meta []metaItem) bool {
	if w.global == "" {
		return true
	}
	global, _ := metaValue(meta, "global")
	return parseGlobals(global)[w.global]
}

// render builds the page for the resource at resourcePath.
func (w wrapper) render(meta []metaItem, resourcePath, query string) string {
	var metas, scripts []string
	for _, m := range meta {
		switch {
		case w.worker && m.key == "script":
			scripts = append(scripts, fmt.Sprintf(`importScripts("%s")`, jsEscape(m.value)))
		case w.worker && m.key == "title":
			scripts = append(scripts, fmt.Sprintf(`self.META_TITLE = "%s";`, jsEscape(m.value)))
		case w.worker:
		case m.key == "timeout" && m.value == "long":
			metas = append(metas, `<meta name="timeout" content="long">`)
		case m.key == "title":
			t := strings.NewReplacer("&", "&amp;", "<", "&lt;").Replace(m.value)
			metas = append(metas, "<title>"+t+"</title>")
		case m.key == "script":
			src := strings.NewReplacer("&", "&amp;", `"`, "&quot;").Replace(m.value)
			scripts = append(scripts, `<script src="`+src+`"></script>`)
		}
	}
	return strings.NewReplacer(
		"%(meta)s", strings.Join(metas, "\n"),
		"%(script)s", strings.Join(scripts, "\n"),
		"%(path)s", resourcePath,
		"%(query)s", query,
	).Replace(w.template)
}

func jsEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

const anyWindowPage = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script>
self.GLOBAL = {
  isWindow: function() { return true; },
  isWorker: function() { return false; },
  isShadowRealm: function() { return false; },
};
</script>
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
%(script)s
<div id=log></div>
<script src="%(path)s"></script>
`

const windowPage = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
%(script)s
<div id=log></div>
<script src="%(path)s"></script>
`

// Worker pages have no %(script)s: the worker script imports them.
const dedicatedWorkerPage = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<div id=log></div>
<script>
fetch_tests_from_worker(new Worker("%(path)s%(query)s"));
</script>
`

const sharedWorkerPage = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<div id=log></div>
<script>
fetch_tests_from_worker(new SharedWorker("%(path)s%(query)s"));
</script>
`

const serviceWorkerPage = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<div id=log></div>
<script>
(async function() {
  const scope = 'does/not/exist';
  let reg = await navigator.serviceWorker.getRegistration(scope);
  if (reg) await reg.unregister();
  reg = await navigator.serviceWorker.register("%(path)s%(query)s", {scope});
  fetch_tests_from_worker(reg.installing);
})();
</script>
`

// The worker script's %(meta)s is always empty, as in wptserve.
const workerScript = `%(meta)s
self.GLOBAL = {
  isWindow: function() { return false; },
  isWorker: function() { return true; },
  isShadowRealm: function() { return false; },
};
importScripts("/resources/testharness.js");
%(script)s
importScripts("%(path)s");
done();
`
