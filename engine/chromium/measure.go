package chromium

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/memory/measurement"
	"github.com/wdext/wdext/wire"
)

// scene is a top-level browsing context as CDP shows it: the page target,
// the out-of-process iframes below it and the dedicated workers of both,
// each with the V8 isolate it runs in.
type scene struct {
	page  *node
	nodes []*node // page first, then iframes, then workers
}

// node is one target of a scene.
type node struct {
	info    *target.Info
	session *cdp.Session
	isolate string
}

func (n *node) String() string { return describe(n.info.Type, n.info.URL) }

// isolates returns one node per distinct isolate, in scene order: targets
// that share an isolate (the page and a same-site frame nested in a
// cross-site one, say) share one heap and one garbage collector.
func (s *scene) isolates() []*node {
	seen := map[string]bool{}
	var out []*node
	for _, n := range s.nodes {
		if !seen[n.isolate] {
			seen[n.isolate] = true
			out = append(out, n)
		}
	}
	return out
}

// collect finds the page target of the window handle (chromedriver's
// window handles are CDP target ids) and every iframe and dedicated worker
// target below it. Chromium lists dedicated workers in Target.getTargets
// with their parent, so no auto-attach (which could pause new workers) is
// needed. With check, each target must answer within probeTimeout (see
// watch.quick): one that does not fails the collection with its state,
// but for frames and workers that crashed or went away, which have no
// memory left and are left out.
func (e *Engine) collect(ctx context.Context, b *cdp.Browser, handle string, check bool) (*scene, error) {
	pageInfo, below, err := b.PageTree(ctx, handle)
	var np *cdp.NoPageError
	if errors.As(err, &np) {
		return nil, noPage(np)
	}
	if err != nil {
		return nil, err
	}
	picked := append([]*target.Info{pageInfo}, below...)
	rank := func(t *target.Info) int {
		switch t.Type {
		case "page":
			return 0
		case "iframe":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(picked, func(a, b *target.Info) int { return rank(a) - rank(b) })

	nodes := make([]*node, len(picked))
	errs := make([]error, len(picked))
	var wg sync.WaitGroup
	for i, t := range picked {
		wg.Add(1)
		go func() { // owned here: waited for below
			defer wg.Done()
			n := &node{info: t}
			errs[i] = onTarget(ctx, b, t.TargetID, func(s *cdp.Session) error {
				get := func(ctx context.Context) error {
					id, err := cdproto.Call(ctx, s, runtime.GetIsolateID, cdproto.Empty{})
					n.session, n.isolate = s, id.ID
					return err
				}
				if !check {
					return get(ctx)
				}
				w := e.watch(ctx, s, t)
				defer w.stop()
				return w.quick(get)
			})
			nodes[i] = n
		}()
	}
	wg.Wait()
	if errs[0] != nil {
		if stateOf(errs[0]) != 0 {
			return nil, errs[0]
		}
		return nil, fmt.Errorf("attaching to the page %s: %w", pageInfo.URL, errs[0])
	}
	sc := &scene{page: nodes[0]}
	for i, n := range nodes {
		// A frame or worker that crashed or went away since the listing
		// has no memory left to measure; one that is busy or blocked
		// would hold the measurement.
		switch k := stateOf(errs[i]); {
		case errs[i] == nil:
			sc.nodes = append(sc.nodes, n)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case k != 0 && k != stateCrashed && k != stateGone:
			return nil, errs[i]
		}
	}
	return sc, nil
}

// onTarget runs fn with a session to the target. A cached session the
// browser no longer knows (the target detached it) is replaced once.
func onTarget(ctx context.Context, b *cdp.Browser, id target.ID, fn func(*cdp.Session) error) error {
	for attempt := 0; ; attempt++ {
		s, err := b.Attach(ctx, id)
		if err != nil {
			return err
		}
		err = fn(s)
		var ce *cdp.Error
		if err == nil || attempt > 0 || ctx.Err() != nil || !errors.As(err, &ce) {
			return err
		}
		b.Forget(id)
	}
}

// MeasureMemory measures the current window's top-level browsing context
// from source (wire.SourceAPI, wire.SourceEngine, or "" for the default:
// the API where the page is cross-origin isolated, else the engine).
func (e *Engine) MeasureMemory(ctx context.Context, source string) (_ wire.MemoryMeasurement, err error) {
	defer func() { err = e.ended(ctx, err) }()
	b, err := e.browser(ctx)
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	handle, err := e.currentWindow(ctx)
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	return e.measure(ctx, b, handle, source)
}

func (e *Engine) measure(ctx context.Context, b *cdp.Browser, handle, source string) (wire.MemoryMeasurement, error) {
	sc, err := e.collect(ctx, b, handle, true)
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	if source == "" || source == wire.SourceAPI {
		isolated, err := crossOriginIsolated(ctx, sc.page.session)
		if err != nil {
			return wire.MemoryMeasurement{}, err
		}
		switch {
		case isolated:
			source = wire.SourceAPI
		case source == wire.SourceAPI:
			return wire.MemoryMeasurement{}, wire.Errorf(wire.UnsupportedOperation,
				"source %q needs a cross-origin-isolated page (Cross-Origin-Opener-Policy: same-origin and "+
					"Cross-Origin-Embedder-Policy: require-corp), and %s is not: use source %q", wire.SourceAPI, sc.page.info.URL, wire.SourceEngine)
		default:
			source = wire.SourceEngine
		}
	}
	var m wire.MemoryMeasurement
	if source == wire.SourceAPI {
		m, err = e.measureAPI(ctx, b, handle, sc)
	} else {
		m, err = measureEngine(ctx, b, sc)
	}
	if err != nil {
		return m, err
	}
	if err := measurement.Validate(m); err != nil {
		return m, wire.Errorf(wire.UnknownError, "the %s measurement breaks the spec's invariants: %v", source, err)
	}
	return m, nil
}

// crossOriginIsolated reports whether the page's top-level document is
// cross-origin isolated (its crossOriginIsolated is true), from the frame
// tree rather than from page script, which could shadow the global.
func crossOriginIsolated(ctx context.Context, s *cdp.Session) (bool, error) {
	tree, err := cdproto.Call(ctx, s, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		return false, fmt.Errorf("reading the page's cross-origin isolation: %w", err)
	}
	return tree.FrameTree != nil && tree.FrameTree.Frame != nil &&
		tree.FrameTree.Frame.CrossOriginIsolatedContextType == cdproto.CrossOriginIsolatedContextTypeIsolated, nil
}

// measureEngine builds the measurement from per-isolate heap usage
// (Runtime.getHeapUsage: V8 heap used plus ArrayBuffer backing stores),
// the frame trees of the page and of its out-of-process iframes, the frame
// owner elements (DOM.getFrameOwner and DOM.describeNode in the parent
// frame's target) and the workers.
func measureEngine(ctx context.Context, b *cdp.Browser, sc *scene) (wire.MemoryMeasurement, error) {
	c := &heapCollection{heaps: measurement.EngineHeaps{Bytes: map[string]uint64{}}, host: map[string]*node{}}
	var wg sync.WaitGroup
	for _, n := range sc.isolates() {
		wg.Go(func() { c.heapUsage(ctx, sc, n) }) // owned here: waited for below
	}
	for _, n := range sc.nodes {
		if n.info.Type == "worker" {
			c.addWorker(n)
			continue
		}
		wg.Go(func() { c.frameTree(ctx, sc, n) }) // owned here: waited for below
	}
	wg.Wait()
	if len(c.errs) > 0 {
		return wire.MemoryMeasurement{}, errors.Join(c.errs...)
	}
	c.dropUnmeasured()
	c.frameOwners(ctx)
	if err := ctx.Err(); err != nil {
		return wire.MemoryMeasurement{}, err
	}
	intermediate, err := c.heaps.Intermediate()
	if err != nil {
		return wire.MemoryMeasurement{}, err
	}
	return measurement.CreateNewMemoryMeasurement(intermediate, nil), nil
}

// heapCollection is what measureEngine gathers from a scene's targets at
// once: the engine's view of the page, which target's frame tree holds
// each frame, and the failures that make the measurement fail. mu guards
// all three while the targets answer.
type heapCollection struct {
	mu    sync.Mutex
	heaps measurement.EngineHeaps
	host  map[string]*node // frame id → target whose frame tree holds it
	errs  []error
}

func (c *heapCollection) fail(err error) {
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
}

// heapUsage records the bytes of n's isolate.
func (c *heapCollection) heapUsage(ctx context.Context, sc *scene, n *node) {
	u, err := cdproto.Call(ctx, n.session, runtime.GetHeapUsage, cdproto.Empty{})
	if err != nil {
		// An iframe or worker that went away has no memory
		// left; its realms are dropped below.
		if n == sc.page || ctx.Err() != nil {
			c.fail(fmt.Errorf("heap usage of %s: %w", n, err))
		}
		return
	}
	c.mu.Lock()
	c.heaps.Bytes[n.isolate] = uint64(u.UsedSize) + uint64(u.BackingStorageSize)
	c.mu.Unlock()
}

// addWorker records the dedicated worker target n.
func (c *heapCollection) addWorker(n *node) {
	c.mu.Lock()
	c.heaps.Workers = append(c.heaps.Workers, measurement.EngineWorker{
		URL: n.info.URL, Global: wire.ScopeDedicatedWorker, Frame: string(n.info.ParentFrameID), Isolate: n.isolate,
	})
	c.mu.Unlock()
}

// frameTree records the frames of n's frame tree, each hosted by n.
func (c *heapCollection) frameTree(ctx context.Context, sc *scene, n *node) {
	tree, err := cdproto.Call(ctx, n.session, page.GetFrameTree, cdproto.Empty{})
	if err != nil || tree.FrameTree == nil {
		if n == sc.page || ctx.Err() != nil {
			c.fail(fmt.Errorf("frame tree of %s: %w", n, err))
		}
		return // an iframe that went away
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var walk func(t *page.FrameTree, root bool)
	walk = func(t *page.FrameTree, root bool) {
		f := t.Frame
		parent := string(f.ParentID)
		if n == sc.page && root {
			parent = ""
		}
		url := f.URL + f.URLFragment
		if url == "" {
			// A frame still on its initial empty document
			// (CDP sends no URL): the document's URL is
			// about:blank.
			url = "about:blank"
		}
		c.heaps.Frames = append(c.heaps.Frames, measurement.EngineFrame{
			ID: string(f.ID), ParentID: parent, URL: url,
			Origin: measurement.SerializedOrigin(f.SecurityOrigin), Isolate: n.isolate,
		})
		c.host[string(f.ID)] = n
		for _, ch := range t.ChildFrames {
			walk(ch, false)
		}
	}
	walk(tree.FrameTree, true)
}

// dropUnmeasured drops the realms of isolates that went away
// mid-collection, and frames whose parent is no longer among the frames
// (it navigated), with their descendants, rather than fail the
// measurement.
func (c *heapCollection) dropUnmeasured() {
	measured := func(isolate string) bool { _, ok := c.heaps.Bytes[isolate]; return ok }
	c.heaps.Frames = connected(slices.DeleteFunc(c.heaps.Frames, func(f measurement.EngineFrame) bool { return !measured(f.Isolate) }))
	c.heaps.Workers = slices.DeleteFunc(c.heaps.Workers, func(w measurement.EngineWorker) bool { return !measured(w.Isolate) })
}

// frameOwners sets the container of every nested frame, asking the
// target that hosts its parent. Unknown owners stay nil: the attribution
// then names an empty container rather than none.
func (c *heapCollection) frameOwners(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range c.heaps.Frames {
		f := &c.heaps.Frames[i]
		if f.ParentID == "" {
			continue
		}
		owner := c.host[f.ParentID]
		wg.Go(func() { // owned here: waited for below
			f.Container, _ = frameOwner(ctx, owner.session, f.ID)
		})
	}
	wg.Wait()
}

// connected keeps the top-level frame and the frames that reach it.
func connected(frames []measurement.EngineFrame) []measurement.EngineFrame {
	byID := map[string]*measurement.EngineFrame{}
	for i := range frames {
		byID[frames[i].ID] = &frames[i]
	}
	reaches := func(f *measurement.EngineFrame) bool {
		for range len(frames) {
			if f.ParentID == "" {
				return true
			}
			p, ok := byID[f.ParentID]
			if !ok {
				return false
			}
			f = p
		}
		return false // a cycle: cannot happen, but never loop
	}
	var out []measurement.EngineFrame
	for i := range frames {
		if reaches(&frames[i]) {
			out = append(out, frames[i])
		}
	}
	return out
}

// frameOwner describes the element that holds a frame, from the target
// that renders the frame's parent.
func frameOwner(ctx context.Context, s *cdp.Session, frame string) (*measurement.ContainerElement, error) {
	o, err := cdproto.Call(ctx, s, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: cdproto.FrameID(frame)})
	if err != nil {
		return nil, err
	}
	d, err := cdproto.Call(ctx, s, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: o.BackendNodeID})
	if err != nil || d.Node == nil {
		return nil, err
	}
	c := &measurement.ContainerElement{LocalName: d.Node.LocalName}
	if c.LocalName == "" {
		c.LocalName = strings.ToLower(d.Node.NodeName)
	}
	for i := 0; i+1 < len(d.Node.Attributes); i += 2 {
		switch v := d.Node.Attributes[i+1]; d.Node.Attributes[i] {
		case "id":
			c.ID = v
		case "src":
			c.Src = v
		case "data":
			c.Data = v
		}
	}
	return c, nil
}
