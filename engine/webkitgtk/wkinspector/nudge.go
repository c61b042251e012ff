package wkinspector

import (
	"encoding/json"
	"time"

	"github.com/gorilla/websocket"
)

// Nudging. WebKitGTK's remote inspector server relays replies to the
// inspector client in the same process over a loopback socket without
// TCP_NODELAY, two small writes in a row per page command (the envelope's
// reply, then the command's). Nagle holds the second until the first is
// acknowledged, and the receiving end, which has nothing to send back,
// delays that acknowledgement by Linux's 40 ms: any command took about
// 44 ms (measured on WebKitGTK 2.50.6 with strace and ss; TCP_QUICKACK on
// wdext's own socket changed nothing). Anything sent on the connection
// meanwhile crosses that socket and carries the acknowledgement, so a
// connection sends a nudge, a message of no consequence, every nudgeEvery
// while a command it sent less than nudgeFor ago waits for its reply: the
// held reply goes out at once. With the driver's commands nudged too
// (Nudge), BenchmarkWebKitGTK's medians fell from 249–266 to 73–82 ms for
// a measurement, 241–247 to 79–88 for a collection and 106–109 to 63–72
// for a census (three or four runs each).
const nudgeEvery = time.Millisecond

// nudgeFor is how long a reply can be held: past it, the delayed
// acknowledgement has gone by itself. (A variable so that tests can
// stretch it.)
var nudgeFor = 45 * time.Millisecond

// Nudge nudges for as long as a reply can be held, whether or not c
// waits for one: the driver's own commands to the same browser wait
// for the same acknowledgement (a WebDriver command sent meanwhile
// finishes sooner).
func (c *Conn) Nudge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nudgeUntil = time.Now().Add(nudgeFor)
	c.startNudging()
}

// nudgeWhileWaiting nudges while c waits for a reply to what it has just
// sent, for as long as that reply can be held.
func (c *Conn) nudgeWhileWaiting() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waitNudgeUntil = time.Now().Add(nudgeFor)
	c.startNudging()
}

// startNudging starts the nudger unless it runs or c has ended; c.mu is
// held.
func (c *Conn) startNudging() {
	if c.nudging || c.err != nil {
		return
	}
	c.nudging = true
	c.nudger.Add(1)
	go c.nudge() // owned by c: ends when nothing needs nudging, or c ends; Close waits
}

// nudge sends a nudge every nudgeEvery while one is needed.
func (c *Conn) nudge() {
	defer c.nudger.Done()
	t := time.NewTicker(nudgeEvery)
	defer t.Stop()
	for {
		select {
		case <-c.done:
		case <-t.C:
		}
		msg, ok := c.nextNudge()
		if !ok {
			return
		}
		c.wmu.Lock()
		c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
		err := c.ws.WriteMessage(websocket.TextMessage, msg)
		c.wmu.Unlock()
		if err != nil {
			c.mu.Lock()
			c.nudging = false
			c.mu.Unlock()
			return // the socket failed: the next command's write says so
		}
	}
}

// nextNudge returns the next nudge to send, or false, having stopped the
// nudger, when none is needed.
func (c *Conn) nextNudge() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	waiting := len(c.pending) > 0 && now.Before(c.waitNudgeUntil)
	if c.err != nil || !(waiting || now.Before(c.nudgeUntil)) {
		c.nudging = false
		return nil, false
	}
	// A message for a target that does not exist: the browser's own
	// process answers it with an error, which nobody waits for, and the
	// page is not disturbed.
	msg, _ := json.Marshal(map[string]any{"id": c.newID(), "method": "Target.sendMessageToTarget",
		"params": map[string]any{"targetId": nudgeTarget, "message": "{}"}})
	return msg, true
}

// nudgeTarget is the target id nudges are sent to: none has it.
const nudgeTarget = "wdext-nudge"
