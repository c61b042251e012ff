package forcetrace

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Proxy is a DevTools endpoint (host:port, as a debuggerAddress) in front
// of a browser's. It passes every message through, renumbering the
// commands (its own go to the browser too), and reports the trace of each
// force that talks through it.
type Proxy struct {
	upstream string
	report   func(ForceReport)
	srv      *httptest.Server

	mu    sync.Mutex
	links []*link
}

// NewProxy starts a proxy in front of the browser at debuggerAddress,
// which calls report with each force's report, until the test ends.
func NewProxy(t testing.TB, debuggerAddress string, report func(ForceReport)) *Proxy {
	p := newProxy(debuggerAddress, report)
	t.Cleanup(p.Close)
	return p
}

func newProxy(debuggerAddress string, report func(ForceReport)) *Proxy {
	p := &Proxy{upstream: debuggerAddress, report: report}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// Addr is the proxy's debuggerAddress.
func (p *Proxy) Addr() string { return strings.TrimPrefix(p.srv.URL, "http://") }

// Close stops the proxy and closes the connections through it.
func (p *Proxy) Close() {
	p.srv.Close()
	p.mu.Lock()
	links := p.links
	p.links = nil
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/json/version" {
		p.version(w, r)
		return
	}
	browser, resp, err := websocket.DefaultDialer.DialContext(r.Context(), "ws://"+p.upstream+r.URL.Path, nil)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	up := websocket.Upgrader{ReadBufferSize: 1 << 20, WriteBufferSize: 64 << 10}
	client, err := up.Upgrade(w, r, nil)
	if err != nil {
		browser.Close()
		return
	}
	browser.SetReadLimit(1 << 30)
	client.SetReadLimit(1 << 30)
	l := &link{client: client, browser: browser, ids: map[int64]int64{}, own: map[int64]chan rawMessage{},
		reading: map[string]chan struct{}{}, done: make(chan struct{}), force: &tracker{report: p.report}}
	p.mu.Lock()
	p.links = append(p.links, l)
	p.mu.Unlock()
	go l.fromBrowser() // owned by the link: ends when either side closes
	go l.fromClient()  // owned by the link: ends when either side closes
}

// version is the browser's /json/version, its websocket on the proxy.
func (p *Proxy) version(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://"+p.upstream+"/json/version", nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if u, ok := v["webSocketDebuggerUrl"].(string); ok {
		if i := strings.Index(u, "/devtools/"); i >= 0 {
			v["webSocketDebuggerUrl"] = "ws://" + p.Addr() + u[i:]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// rawMessage is a protocol message, its members undecoded.
type rawMessage map[string]json.RawMessage

// link is one connection through the proxy.
type link struct {
	client, browser *websocket.Conn
	cmu, bmu        sync.Mutex // writes to each
	force           *tracker

	mu     sync.Mutex
	nextID int64
	ids    map[int64]int64           // the client's command ids, by the browser's
	own    map[int64]chan rawMessage // the replies the proxy awaits, by id
	// reading are the streams the proxy reads, closed when it has.
	reading map[string]chan struct{}
	done    chan struct{}
	once    sync.Once
}

func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		l.client.Close()
		l.browser.Close()
	})
}

// fromClient passes the engine's commands on, once the proxy has read
// the stream an IO.close closes.
func (l *link) fromClient() {
	defer l.close()
	for {
		_, data, err := l.client.ReadMessage()
		if err != nil {
			return
		}
		var m rawMessage
		var id int64
		var method string
		if json.Unmarshal(data, &m) != nil || json.Unmarshal(m["id"], &id) != nil || json.Unmarshal(m["method"], &method) != nil {
			continue
		}
		l.force.command(method, m["params"])
		if read := l.readOf(method, m["params"]); read != nil {
			go func() { // owned by the link: ends once the stream is read, or the link closes
				select {
				case <-read:
				case <-l.done:
				}
				l.send(id, m)
			}()
			continue
		}
		l.send(id, m)
	}
}

// readOf is what an IO.close of a stream the proxy reads waits for.
func (l *link) readOf(method string, params json.RawMessage) chan struct{} {
	if method != "IO.close" {
		return nil
	}
	var p struct {
		Handle string `json:"handle"`
	}
	_ = json.Unmarshal(params, &p)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reading[p.Handle]
}

// send sends the client's command with id to the browser.
func (l *link) send(id int64, m rawMessage) {
	l.mu.Lock()
	l.nextID++
	bid := l.nextID
	l.ids[bid] = id
	l.mu.Unlock()
	m["id"], _ = json.Marshal(bid)
	data, _ := json.Marshal(m)
	l.write(l.browser, &l.bmu, data)
}

func (l *link) write(ws *websocket.Conn, mu *sync.Mutex, data []byte) {
	mu.Lock()
	defer mu.Unlock()
	if ws.WriteMessage(websocket.TextMessage, data) != nil {
		go l.close() // owned by the link
	}
}

// fromBrowser passes the browser's replies and events on, but for the
// replies to the proxy's own commands.
func (l *link) fromBrowser() {
	defer l.close()
	for {
		_, data, err := l.browser.ReadMessage()
		if err != nil {
			return
		}
		var m rawMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		var id int64
		if json.Unmarshal(m["id"], &id) != nil {
			// An event.
			var method string
			_ = json.Unmarshal(m["method"], &method)
			if method == "Tracing.tracingComplete" {
				var session string
				_ = json.Unmarshal(m["sessionId"], &session)
				l.complete(session, m["params"])
			}
			l.write(l.client, &l.cmu, data)
			continue
		}
		l.mu.Lock()
		ch, own := l.own[id]
		cid := l.ids[id]
		delete(l.own, id)
		delete(l.ids, id)
		l.mu.Unlock()
		if own {
			ch <- m
			continue
		}
		m["id"], _ = json.Marshal(cid)
		data, _ = json.Marshal(m)
		l.write(l.client, &l.cmu, data)
	}
}

// complete starts reading the trace of a force's window, before the
// engine hears that it is complete (and closes its stream): a stream of
// the session that traced ("" for the browser's, else a page's).
func (l *link) complete(session string, params json.RawMessage) {
	w, stream, loss := l.force.complete(params)
	if w == nil {
		return
	}
	if stream == "" {
		go l.force.done(w, nil, loss, errors.New("no stream")) // owned by the link: reports
		return
	}
	read := make(chan struct{})
	l.mu.Lock()
	l.reading[stream] = read
	l.mu.Unlock()
	go func() { // owned by the link: bounded by the read's timeout
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		data, err := l.readStream(ctx, session, stream)
		l.mu.Lock()
		delete(l.reading, stream)
		l.mu.Unlock()
		close(read)
		l.force.done(w, data, loss, err)
	}()
}

// readStream reads a stream of the session's to its end.
func (l *link) readStream(ctx context.Context, session, h string) ([]byte, error) {
	var data []byte
	for {
		// IO.read's data is a string, in base64 when base64Encoded.
		var res struct {
			Base64Encoded bool   `json:"base64Encoded"`
			Data          string `json:"data"`
			EOF           bool   `json:"eof"`
		}
		if err := l.call(ctx, session, "IO.read", map[string]any{"handle": h, "size": 1 << 22}, &res); err != nil {
			return nil, err
		}
		if res.Base64Encoded {
			d, err := base64.StdEncoding.DecodeString(res.Data)
			if err != nil {
				return nil, err
			}
			data = append(data, d...)
		} else {
			data = append(data, res.Data...)
		}
		if res.EOF {
			return data, nil
		}
	}
}

// call sends a command of the proxy's own to the browser.
func (l *link) call(ctx context.Context, session, method string, params, result any) error {
	ch := make(chan rawMessage, 1)
	l.mu.Lock()
	l.nextID++
	id := l.nextID
	l.own[id] = ch
	l.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	l.write(l.browser, &l.bmu, data)
	select {
	case m := <-ch:
		if e := m["error"]; e != nil {
			return errors.New(method + ": " + string(e))
		}
		return json.Unmarshal(m["result"], result)
	case <-ctx.Done():
		return ctx.Err()
	case <-l.done:
		return errors.New("the connection closed")
	}
}
