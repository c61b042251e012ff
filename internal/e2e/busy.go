package e2e

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// BusyPath is where a BusyLoop's handler is mounted (ServePages).
const BusyPath = "/busy-go-on"

// A BusyLoop is a page's main thread kept busy in a script that the test
// ends: the script (Script) loops, never returning to its event loop, and
// asks the handler (mounted at BusyPath) every 100 ms, by a synchronous
// request, whether to go on. Its first request says that the loop runs,
// the latest when it last ran; it stops once Stop is called, or after a
// minute. chromedriver's Delete Session waits for such a loop: stop it
// before the session ends.
type BusyLoop struct {
	started chan struct{}
	letGo   chan struct{}
	goOnce  sync.Once
	stopped atomic.Bool
	lastAsk atomic.Int64 // unix nanoseconds
}

// NewBusyLoop returns a loop not yet started.
func NewBusyLoop() *BusyLoop {
	return &BusyLoop{started: make(chan struct{}, 1), letGo: make(chan struct{})}
}

// startQuery is the question the script asks before it loops.
const startQuery = "start"

// Script starts the loop once the test lets it (Go), which it does when
// the driver's Execute Script has answered: chromedriver answers a script
// only once the page is free again, so a loop begun before would hold the
// answer for its whole minute (measured on a loaded machine: with a 10 ms
// timer, the script's answer came after the loop had ended).
func (b *BusyLoop) Script() string {
	return fmt.Sprintf(`fetch(%q).then(() => {
	const end = Date.now() + 60000;
	for (let ask = 0; Date.now() < end; ) {
		if (Date.now() < ask) continue;
		ask = Date.now() + 100;
		const r = new XMLHttpRequest();
		r.open("GET", %q, false);
		r.send();
		if (r.responseText === "stop") break;
	}
})`, BusyPath+"?"+startQuery, BusyPath)
}

// Go lets the script's loop begin.
func (b *BusyLoop) Go() { b.goOnce.Do(func() { close(b.letGo) }) }

// ServeHTTP answers the loop's question, and the script's before it loops
// once the test lets it go (Go).
func (b *BusyLoop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.RawQuery == startQuery {
		select {
		case <-b.letGo:
		case <-r.Context().Done():
		}
		return
	}
	b.lastAsk.Store(time.Now().UnixNano())
	select {
	case b.started <- struct{}{}:
	default:
	}
	if b.stopped.Load() {
		io.WriteString(w, "stop")
	}
}

// Started is signalled by the loop's first request.
func (b *BusyLoop) Started() <-chan struct{} { return b.started }

// Running reports whether the loop asked within the last 300 ms.
func (b *BusyLoop) Running() bool {
	return time.Since(time.Unix(0, b.lastAsk.Load())) < 300*time.Millisecond
}

// Stop ends the loop at its next request.
func (b *BusyLoop) Stop() { b.stopped.Store(true) }
