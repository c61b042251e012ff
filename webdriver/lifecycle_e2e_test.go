package webdriver_test

import (
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/webdriver"
)

// When the managed chromedriver dies, a command on a session it held gets
// "invalid session id" (a W3C reply, not a dropped connection), and a new
// session gets a new driver.
func TestDriverDeathInvalidatesSessions(t *testing.T) {
	env := e2e.Start(t)
	c := newWire(t, env.URL, true)
	id, _ := c.newSession(newSessionBody(nil))
	c.do("GET", "/session/"+id+"/title", nil).ok(t, nil)

	env.Driver.Kill()
	start := time.Now()
	r := c.do("GET", "/session/"+id+"/title", nil)
	t.Logf("command on a session of the dead driver answered in %v", time.Since(start))
	r.w3cError(t, webdriver.InvalidSessionID)
	assert.Equal(t, env.Server.Sessions().Len(), 0, "the dead session is still registered")
	// And again, now that wdext has forgotten it.
	c.do("GET", "/session/"+id+"/title", nil).w3cError(t, webdriver.InvalidSessionID)

	next, _ := c.newSession(newSessionBody(nil))
	var title string
	c.do("GET", "/session/"+next+"/title", nil).ok(t, &title)
	c.do("DELETE", "/session/"+next, nil).ok(t, nil)
}

// A command in flight when the driver dies gets a W3C error too.
func TestDriverDeathDuringCommand(t *testing.T) {
	env := e2e.Start(t)
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
	r.w3cError(t, webdriver.InvalidSessionID)

	next, _ := c.newSession(newSessionBody(nil))
	c.do("GET", "/session/"+next+"/title", nil).ok(t, nil)
}
