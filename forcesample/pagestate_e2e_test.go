package forcesample_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tebeka/selenium"
	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/forcesample"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/webdriver/wdclient"
	"github.com/wdext/wdext/wire"
)

// forceTimed forces a sample with a client-side bound, and says how long
// the answer took.
func forceTimed(t *testing.T, wd selenium.WebDriver) (*wire.Error, time.Duration) {
	t.Helper()
	c, err := wdclient.For(wd)
	assert.NilError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err = c.ForceSample(ctx, wd.SessionID())
	took := time.Since(start)
	if err == nil {
		return nil, took
	}
	var we *wire.Error
	if !errors.As(err, &we) {
		t.Fatalf("not a W3C error after %v: %v", took, err)
	}
	return we, took
}

// A force whose page is busy in a loop, blocked in an alert or crashed
// answers within seconds, naming the page's state: a busy page would hold
// the browser's Tracing.start, and wdext finds it before it asks.
func TestForceSampleBadPage(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	// The busy page's loop asks the test every 100 ms, by a synchronous
	// request, whether to go on (its main thread never returns to its
	// event loop): the first request says the loop runs (on a loaded
	// machine its timer may fire late, and a force that came first would
	// rightly succeed; a beacon sent from the loop arrived only after it
	// ended, measured in CI), the last when it still ran, and it stops
	// once the test is done, so chromedriver's Delete Session does not
	// wait for it.
	started := make(chan struct{}, 1)
	var done atomic.Bool
	var lastAsk atomic.Int64 // unix nanoseconds
	pages := e2e.ServePages(t, e2e.Testdata(), map[string]http.Handler{
		"/busy-go-on": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			lastAsk.Store(time.Now().UnixNano())
			select {
			case started <- struct{}{}:
			default:
			}
			if done.Load() {
				io.WriteString(w, "stop")
			}
		}),
	})
	for _, tc := range []struct {
		name  string
		enter func(t *testing.T, wd selenium.WebDriver)
		code  wire.ErrorCode
		says  string
	}{
		{"busy", func(t *testing.T, wd selenium.WebDriver) {
			t.Cleanup(func() { done.Store(true) }) // before the session's end
			// A minute at most, whatever happens to the test.
			_, err := wd.ExecuteScript(`setTimeout(() => {
				const end = Date.now() + 60000;
				for (let ask = 0; Date.now() < end; ) {
					if (Date.now() < ask) continue;
					ask = Date.now() + 100;
					const r = new XMLHttpRequest();
					r.open("GET", "/busy-go-on", false);
					r.send();
					if (r.responseText === "stop") break;
				}
			}, 10)`, nil)
			assert.NilError(t, err)
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the busy loop did not start within 10 s")
			}
		}, wire.Timeout, "main thread"},
		{"alert", func(t *testing.T, wd selenium.WebDriver) {
			_, err := wd.ExecuteScript(`setTimeout(() => alert("hello there"), 10)`, nil)
			assert.NilError(t, err)
		}, wire.UnexpectedAlertOpen, `"hello there"`},
		{"crashed", func(_ *testing.T, wd selenium.WebDriver) {
			wd.Get("chrome://crash") // chromedriver answers "tab crashed"
		}, chromium.TabCrashed, "crashed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
			assert.NilError(t, wd.Get(pages.A+"/forcesample/frame.html"))
			waitLoaded(t, wd)
			assert.NilError(t, wdclient.ForceSample(wd))
			tc.enter(t, wd)
			time.Sleep(200 * time.Millisecond)
			we, took := forceTimed(t, wd)
			if we == nil {
				time.Sleep(300 * time.Millisecond)
				running := time.Since(time.Unix(0, lastAsk.Load())) < 300*time.Millisecond
				t.Fatalf("the force succeeded after %v (the busy loop still runs: %v)", took, running)
			}
			t.Logf("%v after %v", we, took)
			assert.Check(t, we.Code == tc.code, "%v", we)
			assert.Check(t, strings.Contains(we.Message, tc.says), we.Message)
			// A hang check, generous for a loaded machine (measured: 2 s
			// idle and with two test packages and two busy loops beside
			// it; before, 15 s and a wrong code).
			assert.Check(t, took < 12*time.Second, "took %v", took)
		})
	}
}

// A crashed tab that is not the session's current window has no
// profilers left: forces go on sampling the others.
func TestForceSampleOtherTabCrashed(t *testing.T) {
	env := chromiumtest.Start(t, forcesample.Register)
	pages := e2e.ServePages(t, e2e.Testdata(), nil)
	wd := e2e.Session(t, env.URL, chromiumtest.Capabilities())
	assert.NilError(t, wd.Get(pages.A+"/forcesample/frame.html"))
	waitLoaded(t, wd)
	first, err := wd.CurrentWindowHandle()
	assert.NilError(t, err)
	// Another site: another renderer, which crashes alone.
	_, err = wd.ExecuteScript(`window.open(arguments[0], "second")`, []any{pages.B + "/forcesample/frame.html"})
	assert.NilError(t, err)
	handles, err := wd.WindowHandles()
	assert.NilError(t, err)
	for _, h := range handles {
		if h != first {
			assert.NilError(t, wd.SwitchWindow(h))
		}
	}
	wd.Get("chrome://crash")
	assert.NilError(t, wd.SwitchWindow(first))
	time.Sleep(100 * time.Millisecond)
	mark(t, wd)
	we, took := forceTimed(t, wd)
	assert.Assert(t, we == nil, "%v after %v", we, took)
	assert.Equal(t, await(t, wd, `return await probe.count();`), float64(1))
}
