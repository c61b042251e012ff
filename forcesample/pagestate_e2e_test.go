package forcesample_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
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
	// The busy page's loop says when it runs (on a loaded machine its
	// timer may fire late, and a force that came first would rightly
	// succeed; a beacon sent from the loop arrived only after it ended,
	// measured in CI) and whether it still ran.
	busy := e2e.NewBusyLoop()
	pages := e2e.ServePages(t, e2e.Testdata(), map[string]http.Handler{e2e.BusyPath: busy})
	for _, tc := range []struct {
		name  string
		enter func(t *testing.T, wd selenium.WebDriver)
		code  wire.ErrorCode
		says  string
	}{
		{"busy", func(t *testing.T, wd selenium.WebDriver) {
			t.Cleanup(busy.Stop) // before the session's end
			_, err := wd.ExecuteScript(busy.Script(), nil)
			assert.NilError(t, err)
			busy.Go()
			select {
			case <-busy.Started():
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
				t.Fatalf("the force succeeded after %v (the busy loop still runs: %v)", took, busy.Running())
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
