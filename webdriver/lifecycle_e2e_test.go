package webdriver_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium/chromiumtest"
	"github.com/wdext/wdext/internal/procgroup"
	"github.com/wdext/wdext/session"
	"github.com/wdext/wdext/webdriver"
	"github.com/wdext/wdext/wire"
)

// When the managed chromedriver dies, a command on a session it held gets
// "invalid session id" (a W3C reply, not a dropped connection), and a new
// session gets a new driver.
func TestDriverDeathInvalidatesSessions(t *testing.T) {
	env := chromiumtest.Start(t)
	c := newWire(t, env.URL, true)
	id, _ := c.newSession(newSessionBody(nil))
	c.do("GET", "/session/"+id+"/title", nil).ok(t, nil)

	env.Driver.Kill()
	start := time.Now()
	r := c.do("GET", "/session/"+id+"/title", nil)
	t.Logf("command on a session of the dead driver answered in %v", time.Since(start))
	r.w3cError(t, wire.InvalidSessionID)
	assert.Equal(t, env.Server.Sessions().Len(), 0, "the dead session is still registered")
	// And again, now that wdext has forgotten it.
	c.do("GET", "/session/"+id+"/title", nil).w3cError(t, wire.InvalidSessionID)

	next, _ := c.newSession(newSessionBody(nil))
	var title string
	c.do("GET", "/session/"+next+"/title", nil).ok(t, &title)
	c.do("DELETE", "/session/"+next, nil).ok(t, nil)
}

// A command in flight when the driver dies gets a W3C error too.
func TestDriverDeathDuringCommand(t *testing.T) {
	env := chromiumtest.Start(t)
	c := newWire(t, env.URL, true)
	id, _ := c.newSession(newSessionBody(nil))

	var killedAt time.Time
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Let the script start (if it has not, the command still gets the
		// same answer: the session is dead by then).
		time.Sleep(500 * time.Millisecond)
		killedAt = time.Now()
		env.Driver.Kill()
	}()
	start := time.Now()
	r := c.do("POST", "/session/"+id+"/execute/async", map[string]any{
		"script": "setTimeout(arguments[0], 5000)", "args": []any{},
	})
	wg.Wait()
	t.Logf("in-flight command answered %v after the kill began (%v after it was sent)", time.Since(killedAt), time.Since(start))
	r.w3cError(t, wire.InvalidSessionID)

	next, _ := c.newSession(newSessionBody(nil))
	c.do("GET", "/session/"+next+"/title", nil).ok(t, nil)
}

// failingCommand is an extension whose engine step fails without naming a
// cause, as one does when the browser or the window is gone.
func failingCommand(s *webdriver.Server) {
	s.Handle("POST", "/session/{id}/test/fail", func(context.Context, *session.Session, []byte) (any, error) {
		return nil, errors.New("the engine's connection broke")
	})
}

// An extension command that fails because the session's window was
// closed, or its browser died, answers what the driver answers for that
// session: "no such window", "invalid session id".
func TestCommandFailureNamesTheSessionState(t *testing.T) {
	env := chromiumtest.Start(t, failingCommand)
	c := newWire(t, env.URL, true)

	id, _ := c.newSession(newSessionBody(nil))
	c.do("POST", "/session/"+id+"/test/fail", map[string]any{}).w3cError(t, wire.UnknownError)
	// Of two windows, the current one closed.
	c.do("POST", "/session/"+id+"/window/new", map[string]any{}).ok(t, nil)
	c.do("DELETE", "/session/"+id+"/window", nil).ok(t, nil)
	c.do("POST", "/session/"+id+"/test/fail", map[string]any{}).w3cError(t, wire.NoSuchWindow)
	// The only window closed: the driver ended the session.
	var handles []string
	c.do("GET", "/session/"+id+"/window/handles", nil).ok(t, &handles)
	c.do("POST", "/session/"+id+"/window", map[string]any{"handle": handles[0]}).ok(t, nil)
	c.do("DELETE", "/session/"+id+"/window", nil).ok(t, nil)
	c.do("POST", "/session/"+id+"/test/fail", map[string]any{}).w3cError(t, wire.InvalidSessionID)

	id, caps := c.newSession(newSessionBody(nil))
	browser := browserPid(t, caps)
	assert.NilError(t, syscall.Kill(browser, syscall.SIGKILL))
	// Once the driver itself says so: before, the engine may see its
	// connection break while chromedriver has not noticed yet (a race
	// that is the driver's, see the note of commandError's check).
	in, err := env.Driver.Current(context.Background())
	assert.NilError(t, err)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(in.URL.String() + "/session/" + id + "/window")
		assert.NilError(t, err)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			break
		}
	}
	r := c.do("POST", "/session/"+id+"/test/fail", map[string]any{})
	r.w3cError(t, wire.InvalidSessionID)
	assert.Equal(t, env.Server.Sessions().Len(), 0, "the dead session is still registered")
}

// browserPid finds the Chromium browser process of a session: the one
// whose profile is the session's (chrome.userDataDir) and that is no
// child process (--type=…).
func browserPid(t *testing.T, caps map[string]any) int {
	t.Helper()
	chrome, _ := caps["chrome"].(map[string]any)
	dir, _ := chrome["userDataDir"].(string)
	assert.Assert(t, dir != "", "no chrome.userDataDir in %v", caps)
	for _, p := range procgroup.Scan() {
		cmd := p.Cmdline()
		if strings.Contains(cmd, "--user-data-dir="+dir) && !strings.Contains(cmd, "--type=") {
			return p.Pid
		}
	}
	t.Fatalf("no browser process with profile %s", dir)
	return 0
}
