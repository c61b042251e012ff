package webdriver_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/webdriver"
)

// TestMeasureRSS prints the peak resident memory that hostile bodies and
// BiDi messages cost a wdext with the default --max-body (256 MiB). It
// asserts nothing: it measures, and only when WDEXT_MEASURE_RSS is set
// (it moves gigabytes). The client runs in the same process but streams
// from nothing; a discarding driver likewise.
func TestMeasureRSS(t *testing.T) {
	if os.Getenv("WDEXT_MEASURE_RSS") == "" {
		t.Skip("set WDEXT_MEASURE_RSS=1 to measure")
	}
	const mb = 1000 * 1000
	up := sinkDriver(t)
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up}, Guard: webdriver.Guard{MaxBody: 256 << 20}, Log: quietLog()})
	hs := httptest.NewServer(srv)
	defer hs.Close()

	postChunked := func(n int64) {
		req, _ := http.NewRequest("POST", hs.URL+"/session", unsizedZeros(n))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Logf("POST: %v", err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.Logf("POST /session of %d MB: %s", n/mb, resp.Status)
	}
	measure(t, "1 chunked POST /session of 300 MB", func() { postChunked(300 * mb) })
	measure(t, "4 chunked POST /session of 300 MB at once", func() {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { postChunked(300 * mb) })
		}
		wg.Wait()
	})

	// BiDi: a session whose webSocketUrl leads to the sink.
	status, _, reply := post(t, hs.URL+"/session", []byte(`{"capabilities":{"alwaysMatch":{"webSocketUrl":true}}}`), false)
	if status != 200 {
		t.Fatalf("new session: %d %s", status, reply)
	}
	wsURL := "ws" + strings.TrimPrefix(hs.URL, "http") + "/session/s1"
	send := func(what string, total, frame int) {
		d := websocket.Dialer{WriteBufferSize: frame}
		ws, resp, err := d.Dial(wsURL, nil)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		resp.Body.Close()
		defer ws.Close()
		w, err := ws.NextWriter(websocket.BinaryMessage)
		if err == nil {
			_, err = io.Copy(w, io.LimitReader(zeros{}, int64(total)))
		}
		if err == nil {
			err = w.Close()
		}
		// The sink answers each message with its length.
		if err == nil {
			var got []byte
			_, got, err = ws.ReadMessage()
			t.Logf("%s: the driver got %s bytes", what, got)
		}
		if err != nil {
			t.Logf("%s: %v", what, err)
		}
	}
	measure(t, "1 BiDi message of 300 MB", func() { send("300 MB", 300*mb, 64<<10) })
	measure(t, "1 BiDi message of 300 fragments of 1 MB", func() { send("300 × 1 MB", 300*mb, mb) })
	measure(t, "1 BiDi message of 200 MB (under --max-body)", func() { send("200 MB", 200*mb, 64<<10) })
}

// measure runs f and prints the growth of peak RSS it caused.
func measure(t *testing.T, what string, f func()) {
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets the peak (VmHWM) to the current RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset the peak RSS: %v", err)
	}
	base := procStatus(t, "VmRSS")
	f()
	peak := procStatus(t, "VmHWM")
	t.Logf("RSS %-45s +%4d MB (peak %d MB, from %d MB)", what+":", (peak-base)/1000, peak/1000, base/1000)
}

// procStatus reads a kB figure of /proc/self/status.
func procStatus(t *testing.T, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func unsizedZeros(n int64) io.Reader { return unsizedReader{io.LimitReader(zeros{}, n)} }

// unsizedReader hides a reader's length, so that net/http sends it
// chunked.
type unsizedReader struct{ io.Reader }

// sinkDriver is a driver whose sessions have a BiDi websocket that reads
// every message as it comes, keeps nothing, and answers with its length.
func sinkDriver(t *testing.T) *url.URL {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /session", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"value":{"sessionId":"s1","capabilities":{"browserName":"chrome","webSocketUrl":"ws://`+r.Host+`/session/s1"}}}`)
	})
	mux.HandleFunc("GET /session/s1", func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			_, rd, err := c.NextReader()
			if err != nil {
				return
			}
			n, err := io.Copy(io.Discard, rd)
			if err != nil {
				return
			}
			c.WriteMessage(websocket.TextMessage, []byte(strconv.FormatInt(n, 10)))
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return u
}
