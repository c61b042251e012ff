package polyfill_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/polyfill"
)

// engines runs the checks on Chromium (its own Profiler deleted first)
// and, where installed, on WebKitGTK (which has none).
func engines(t *testing.T, check func(t *testing.T, c *e2e.RawSession, page string)) {
	pages := e2e.ServePages(t, e2e.Testdata("polyfill"), nil)
	t.Run("chromium", func(t *testing.T) {
		env := chromiumtest.Start(t)
		c := e2e.NewRawSession(t, env.URL, map[string]any{"browserName": "chrome"})
		check(t, c, pages.A+"/page.html")
	})
	t.Run("webkitgtk", func(t *testing.T) {
		env := webkitgtktest.Start(t)
		c := e2e.NewRawSession(t, env.URL, map[string]any{})
		check(t, c, pages.A+"/page.html")
	})
}

// install loads page and installs the polyfill in it as Profiler.
func install(c *e2e.RawSession, page string) {
	c.Call("POST", "/url", map[string]any{"url": page}, nil)
	c.Call("POST", "/execute/sync", map[string]any{
		// On WebKitGTK, wdext has injected it already.
		"script": `if (!globalThis[Symbol.for("wdext.profiler.forceSample")]) delete window.Profiler; ` + polyfill.Script("Profiler") + " return typeof Profiler;", "args": []any{},
	}, nil)
}

// prelude is the start of every check's script. The checks' profilers
// sample every 10 s: on WebKitGTK the engine adds periodic samples (one
// per sampleInterval while JavaScript runs), and the checks count forced
// samples only.
const prelude = `const done = arguments[arguments.length - 1];
const force = () => globalThis[Symbol.for("wdext.profiler.forceSample")]();
const fail = (e) => done({error: String(e && e.name) + ": " + String(e && e.message)});
`

func TestConstructor(t *testing.T) {
	engines(t, func(t *testing.T, c *e2e.RawSession, page string) {
		install(c, page)
		var got map[string]string
		c.Async(prelude+`
const errs = {};
const tryNew = (k, o) => { try { new Profiler(o); errs[k] = "ok"; } catch (e) { errs[k] = e.constructor.name; } };
tryNew("negative", {sampleInterval: -1, maxBufferSize: 10});
tryNew("noBuffer", {sampleInterval: 10});
tryNew("noInterval", {maxBufferSize: 10});
tryNew("noOptions", undefined);
tryNew("nanInterval", {sampleInterval: NaN, maxBufferSize: 10});
tryNew("string", "x");
tryNew("zero", {sampleInterval: 0, maxBufferSize: 0});
try { Profiler({sampleInterval: 1, maxBufferSize: 1}); errs.call = "ok"; } catch (e) { errs.call = e.constructor.name; }
const p = new Profiler({sampleInterval: 12.5, maxBufferSize: 2 ** 32 + 5});
errs.interval = String(p.sampleInterval);
errs.stopped = String(p.stopped);
errs.tag = Object.prototype.toString.call(p);
errs.eventTarget = String(p instanceof EventTarget);
errs.enumerable = String(Object.keys(window).includes("Profiler"));
p.stop().then(() => { errs.stoppedAfter = String(p.stopped); done(errs); }, fail);`, &got)
		assert.DeepEqual(t, got, map[string]string{
			"negative": "RangeError", "noBuffer": "TypeError", "noInterval": "TypeError", "noOptions": "TypeError",
			"nanInterval": "TypeError", "string": "TypeError", "zero": "ok", "call": "TypeError",
			"interval": "12.5", "stopped": "false", "tag": "[object Profiler]", "eventTarget": "true",
			"enumerable": "false", "stoppedAfter": "true",
		})
	})
}

func TestStopTwiceAndForcedSamples(t *testing.T) {
	engines(t, func(t *testing.T, c *e2e.RawSession, page string) {
		install(c, page)
		var got map[string]any
		c.Async(prelude+`
const p = new Profiler({sampleInterval: 10000, maxBufferSize: 100});
const r = {};
r.before = force();
force(); force();
p.stop().then((trace) => {
  r.trace = trace;
  r.after = force();
  return p.stop().then(() => "resolved", (e) => e.name + "/" + (e instanceof DOMException));
}).then((second) => { r.second = second; done(r); }, fail);`, &got)
		assert.Equal(t, got["before"], float64(1))
		assert.Equal(t, got["after"], float64(0))
		assert.Equal(t, got["second"], "InvalidStateError/true")
		trace := got["trace"].(map[string]any)
		samples := trace["samples"].([]any)
		assert.Equal(t, len(samples), 4, "one at construction, three forced")
		for _, s := range samples[1:] {
			m := s.(map[string]any)
			_, hasStack := m["stackId"]
			assert.Assert(t, !hasStack, "forced samples have no stack: %v", m)
			assert.Assert(t, m["timestamp"].(float64) > 0)
		}
	})
}

func TestBufferFullAndConcurrent(t *testing.T) {
	engines(t, func(t *testing.T, c *e2e.RawSession, page string) {
		install(c, page)
		var got map[string]any
		c.Async(prelude+`
const small = new Profiler({sampleInterval: 10000, maxBufferSize: 2});
const big = new Profiler({sampleInterval: 10000, maxBufferSize: 100});
let full = 0;
small.addEventListener("samplebufferfull", (e) => { full++; });
const counts = [];
for (let i = 0; i < 4; i++) counts.push(force());
const r = {counts, fullSync: full, stoppedWhenFull: small.stopped};
setTimeout(async () => {
  try {
    r.full = full;
    r.small = (await small.stop()).samples.length;
    r.big = (await big.stop()).samples.length;
    done(r);
  } catch (e) { fail(e); }
}, 50);`, &got)
		// small holds its sample at construction and the first force.
		assert.DeepEqual(t, got["counts"], []any{float64(2), float64(1), float64(1), float64(1)})
		assert.Equal(t, got["fullSync"], float64(0), "samplebufferfull is fired in a task of its own")
		assert.Equal(t, got["full"], float64(1))
		assert.Equal(t, got["stoppedWhenFull"], false)
		assert.Equal(t, got["small"], float64(2))
		assert.Equal(t, got["big"], float64(5))
	})
}

// A synchronous force with the caller's stack, and deduplication: two
// samples from the same place share their frames and stacks.
func TestStackAndDedup(t *testing.T) {
	engines(t, func(t *testing.T, c *e2e.RawSession, page string) {
		install(c, page)
		var got map[string]any
		c.Async(prelude+`
const p = new Profiler({sampleInterval: 10000, maxBufferSize: 100});
outer(); outer(); inner();
p.stop().then((trace) => done(trace), fail);`, &got)
		res := got["resources"].([]any)
		frames := got["frames"].([]any)
		stacks := got["stacks"].([]any)
		samples := got["samples"].([]any)
		assert.DeepEqual(t, res, []any{origin(page) + "/stack.js"})
		assert.Equal(t, len(samples), 4, "one at construction, three forced")
		// Names innermost first, as the WPT helper reads them.
		names := func(id float64) []string {
			var out []string
			for s := stacks[int(id)].(map[string]any); s != nil; {
				f := frames[int(s["frameId"].(float64))].(map[string]any)
				out = append(out, f["name"].(string))
				if pid, ok := s["parentId"]; ok {
					s = stacks[int(pid.(float64))].(map[string]any)
				} else {
					s = nil
				}
			}
			return out
		}
		s0, s1, s2 := samples[1].(map[string]any), samples[2].(map[string]any), samples[3].(map[string]any)
		assert.DeepEqual(t, names(s0["stackId"].(float64))[:2], []string{"inner", "outer"})
		assert.Equal(t, s0["stackId"], s1["stackId"], "same stack, same id")
		assert.DeepEqual(t, names(s2["stackId"].(float64))[:1], []string{"inner"})
		byName := map[string]map[string]any{}
		for _, f := range frames {
			m := f.(map[string]any)
			if _, dup := byName[m["name"].(string)]; dup {
				t.Errorf("frame %v twice in %v", m, frames)
			}
			byName[m["name"].(string)] = m
		}
		assert.Equal(t, byName["outer"]["line"], float64(3))
		assert.Equal(t, byName["inner"]["line"], float64(6))
		assert.Equal(t, byName["inner"]["resourceId"], float64(0))
		assert.Assert(t, byName["inner"]["column"].(float64) > 0)
		for i, s := range stacks {
			for j := range i {
				assert.Assert(t, !equalJSON(s, stacks[j]), "stack %v twice", s)
			}
		}
	})
}

// The stack parser, on both engines' formats whatever engine runs it.
func TestParseStack(t *testing.T) {
	engines(t, func(t *testing.T, c *e2e.RawSession, page string) {
		install(c, page)
		var got []any
		o := origin(page)
		c.Async(prelude+`
const parse = globalThis[Symbol.for("wdext.profiler.parseStack")];
const o = location.origin;
done([
  parse("Error\n    at wdextForceSampleHere (" + o + "/p.js:1:1)\n    at inner (" + o + "/a.js:6:10)\n    at async Object.outer (" + o + "/a.js:3:10)\n    at new Foo (" + o + "/a.js:9:2)\n    at HTMLDocument.<anonymous> (" + o + "/a.js:12:3)\n    at " + o + "/a.js:14:1\n    at cross (http://example.com/x.js:1:1)"),
  parse("wdextForceSampleHere@\ninner@" + o + "/a.js:6:10\nouter@" + o + "/a.js:3:10\n@" + o + "/a.js:12:3\nforEach@[native code]\nglobal code@" + o + "/a.js:14:1\ncross@http://example.com/x.js:1:1"),
  parse("wdextForceSampleHere@" + o + "/p.js:1:1\nget x@" + o + "/a.html line 2 > injectedScript:1:28\n@" + o + "/a.html line 2 > eval:1:158"),
]);`, &got)
		a := o + "/a.js"
		assert.DeepEqual(t, got[0], []any{
			map[string]any{"name": "", "url": a, "line": float64(14), "column": float64(1)},
			map[string]any{"name": "", "url": a, "line": float64(12), "column": float64(3)},
			map[string]any{"name": "Foo", "url": a, "line": float64(9), "column": float64(2)},
			map[string]any{"name": "Object.outer", "url": a, "line": float64(3), "column": float64(10)},
			map[string]any{"name": "inner", "url": a, "line": float64(6), "column": float64(10)},
		})
		assert.DeepEqual(t, got[1], []any{
			map[string]any{"name": "", "url": a, "line": float64(14), "column": float64(1)},
			map[string]any{"name": "forEach"},
			map[string]any{"name": "", "url": a, "line": float64(12), "column": float64(3)},
			map[string]any{"name": "outer", "url": a, "line": float64(3), "column": float64(10)},
			map[string]any{"name": "inner", "url": a, "line": float64(6), "column": float64(10)},
		})
		// SpiderMonkey's: an accessor, in scripts the document made.
		h := o + "/a.html"
		assert.DeepEqual(t, got[2], []any{
			map[string]any{"name": "", "url": h, "line": float64(1), "column": float64(158)},
			map[string]any{"name": "get x", "url": h, "line": float64(1), "column": float64(28)},
		})
	})
}

// origin is the origin of page.
func origin(page string) string {
	i := bytes.IndexByte([]byte(page[len("http://"):]), '/')
	return page[:len("http://")+i]
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
