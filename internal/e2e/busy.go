package e2e

import (
	"fmt"
	"io"
	"net/http"
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
	stopped atomic.Bool
	lastAsk atomic.Int64 // unix nanoseconds
}

// NewBusyLoop returns a loop not yet started.
func NewBusyLoop() *BusyLoop { return &BusyLoop{started: make(chan struct{}, 1)} }

// Script starts the loop after delay (a timer, so that the driver's
// Execute Script returns first).
func (b *BusyLoop) Script(delay time.Duration) string {
	return fmt.Sprintf(`setTimeout(() => {
	const end = Date.now() + 60000;
	for (let ask = 0; Date.now() < end; ) {
		if (Date.now() < ask) continue;
		ask = Date.now() + 100;
		const r = new XMLHttpRequest();
		r.open("GET", %q, false);
		r.send();
		if (r.responseText === "stop") break;
	}
}, %d)`, BusyPath, delay.Milliseconds())
}

// ServeHTTP answers the loop's question.
func (b *BusyLoop) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
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
