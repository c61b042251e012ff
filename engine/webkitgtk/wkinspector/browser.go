package wkinspector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// probeWait is how long a target number is given to show a page: a real
// one does in a few milliseconds.
const probeWait = 300 * time.Millisecond

// probeGap is how many empty numbers past the last page end a search.
const probeGap = 3

// Browser is the inspector of one browser, with a connection to each page
// target found so far.
type Browser struct {
	addr       string
	connection int
	// avoid is a target that must not be opened: the automation session's.
	// Opening it hands WebKitWebDriver's connection to the opener, and the
	// driver hangs (measured).
	avoid int

	mu        sync.Mutex
	pages     map[int]*Conn
	highest   int    // the highest target number with a page found so far
	bootstrap string // run first in every frame of every page; "" for none
	onPage    func(*Conn)

	// nudged are the page connections for Nudge, which must not wait for
	// mu (held while probing): set as pages are added; a closed one does
	// nothing when nudged.
	nudged atomic.Pointer[[]*Conn]
}

// OnPrepared makes f be called for every page once its bootstrap script
// is set (again for a page whose bootstrap is set again). f is called with
// the Browser's lock held: it must not block or call the Browser.
func (b *Browser) OnPrepared(f func(*Conn)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onPage = f
}

// Listing reads the target numbers the HTML page at / of the inspector's
// HTTP server lists, with their connection number.
func Listing(ctx context.Context, addr string) (connection int, targets []int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("wkinspector: reading the target list: %w", err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, err
	}
	for _, m := range socketPath.FindAllSubmatch(page, -1) {
		connection, _ = strconv.Atoi(string(m[1]))
		t, _ := strconv.Atoi(string(m[2]))
		targets = append(targets, t)
	}
	return connection, targets, nil
}

var socketPath = regexp.MustCompile(`/socket/(\d+)/(\d+)/WebPage`)

// NewBrowser returns the inspector at addr; connection is the number its
// listing gave, avoid the automation session's target number.
func NewBrowser(addr string, connection, avoid int) *Browser {
	return &Browser{addr: addr, connection: connection, avoid: avoid, pages: map[int]*Conn{}}
}

// Nudge nudges through every page connection open (see Conn.Nudge).
func (b *Browser) Nudge() {
	if conns := b.nudged.Load(); conns != nil {
		for _, c := range *conns {
			c.Nudge()
		}
	}
}

// Close closes every page connection.
func (b *Browser) Close() error {
	b.mu.Lock()
	pages := b.pages
	b.pages = map[int]*Conn{}
	b.nudged.Store(nil)
	b.mu.Unlock()
	for _, c := range pages {
		c.Close()
	}
	return nil
}

// Pages returns a connection to every page: the known ones that are still
// open, and, when fresh is set or none is known, those found by opening
// the target numbers not tried yet, up to probeGap empty numbers past the
// last page.
func (b *Browser) Pages(ctx context.Context, fresh bool) ([]*Conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for n, c := range b.pages {
		select {
		case <-c.Done():
			delete(b.pages, n) // the window closed
		default:
		}
	}
	if fresh || len(b.pages) == 0 {
		if err := b.probe(ctx, 0); err != nil {
			return nil, err
		}
	}
	nums := make([]int, 0, len(b.pages))
	for n := range b.pages {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	out := make([]*Conn, len(nums))
	for i, n := range nums {
		out[i] = b.pages[n]
	}
	return out, nil
}

// FindNew looks for want pages opened since the last search (a window
// the client just opened, say), and prepares them.
func (b *Browser) FindNew(ctx context.Context, want int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.probe(ctx, want)
}

// probe opens the target numbers above the highest page found so far
// until it has found want new pages (0: any number) or probeGap numbers
// in a row had none; b.mu is held. Numbers are handed out in increasing
// order, so no page can appear below the highest one found. It opens
// probeGap numbers at a time, or want: an empty number costs probeWait.
func (b *Browser) probe(ctx context.Context, want int) error {
	step := probeGap
	if want > 0 {
		step = want
	}
	empty, found := 0, 0
	for n := b.highest + 1; empty < probeGap && (want == 0 || found < want); n += step {
		batch := make([]*Conn, step)
		errs := make([]error, step)
		var wg sync.WaitGroup
		for i := range step {
			num := n + i
			if num == b.avoid || b.pages[num] != nil {
				continue
			}
			wg.Add(1)
			go func() { // owned here: waited for below
				defer wg.Done()
				path := fmt.Sprintf("/socket/%d/%d/WebPage", b.connection, num)
				batch[i], errs[i] = Dial(ctx, b.addr, path, probeWait)
			}()
		}
		wg.Wait()
		var failed error
		for i := range step {
			num := n + i
			switch {
			case batch[i] != nil:
				b.add(num, batch[i])
				found++
				empty = 0
				if err := b.prepare(ctx, batch[i]); err != nil {
					failed = err
				}
			case errs[i] != nil && !errors.Is(errs[i], ErrNoTarget):
				failed = errs[i]
			case num == b.avoid || b.pages[num] != nil:
				empty = 0
			default:
				empty++
			}
		}
		if failed != nil {
			return failed
		}
	}
	return nil
}

// add records the page of target number n; b.mu is held.
func (b *Browser) add(n int, c *Conn) {
	b.pages[n] = c
	b.highest = max(b.highest, n)
	conns := slices.Collect(maps.Values(b.pages))
	b.nudged.Store(&conns)
}

// SetBootstrap makes script run first in every frame of every page, before
// the page's own scripts and whatever its Content-Security-Policy says
// (the inspector's Page.setBootstrapScript): in the pages known and in
// those of target numbers open, and in every page found later.
func (b *Browser) SetBootstrap(ctx context.Context, script string, open []int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bootstrap = script
	for _, n := range open {
		if n == b.avoid || b.pages[n] != nil {
			continue
		}
		c, err := Dial(ctx, b.addr, fmt.Sprintf("/socket/%d/%d/WebPage", b.connection, n), probeWait)
		if errors.Is(err, ErrNoTarget) {
			continue
		}
		if err != nil {
			return err
		}
		b.add(n, c)
	}
	for _, c := range b.pages {
		if err := b.prepare(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// prepare sets the bootstrap script on a page, and on every backend a
// navigation moves it to; b.mu is held. It needs the Page domain enabled,
// which stays so.
func (b *Browser) prepare(ctx context.Context, c *Conn) error {
	if b.bootstrap == "" {
		return nil
	}
	if err := c.EnablePage(ctx); err != nil {
		return err
	}
	set := Command{Method: "Page.setBootstrapScript", Params: map[string]any{"source": b.bootstrap}}
	if err := c.Call(ctx, set.Method, set.Params, nil); err != nil {
		return err
	}
	// A new backend does not inherit it (measured: a cross-origin
	// isolated document over https, in a web process of its own, had
	// none).
	if err := c.PrepareBackends(ctx, nil, Command{Method: "Page.enable"}, set); err != nil {
		return err
	}
	if b.onPage != nil {
		b.onPage(c)
	}
	return nil
}
