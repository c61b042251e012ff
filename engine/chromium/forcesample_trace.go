package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/tracing"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wdext/wdext/engine/chromium/cdp"
	"github.com/wdext/wdext/wire"
)

// A force's trace is Perfetto's own protobuf (Tracing.start with a
// perfettoConfig, the trace returned as a stream in proto format), not
// the legacy JSON: once tracing has stopped, the browser converts a trace
// to JSON with Perfetto's trace processor, and adds data sources of its
// own to a Tracing.start with a traceConfig. Measured on Chromium 156
// (see the package doc): Tracing.end to tracingComplete 9.8–10.9 ms that
// way, 2.3 ms in protobuf; Tracing.start 5.9–6.8 ms, 2.9 ms.

// perfettoConfig is the perfetto.protos.TraceConfig of a trace of the
// categories alone: one buffer of 1 MB that discards when full (a full
// buffer is reported as data loss), or, for a trace that lasts (ring),
// overwrites its oldest events, and Chromium's trace event data source
// with the same Chrome trace config a traceConfig would give (Chromium
// turns it into the track_event source's category filter).
func perfettoConfig(categories []string, ring bool) []byte {
	chromeConfig, _ := json.Marshal(map[string]any{
		"record_mode":         "record-as-much-as-possible",
		"included_categories": categories,
		"excluded_categories": []string{"*"},
	})
	var buffer, chrome, source, dataSource, config []byte
	buffer = pbUint(buffer, 1, 1024) // size_kb
	fill := uint64(2)                // fill_policy: DISCARD
	if ring {
		fill = 1 // RING_BUFFER
	}
	buffer = pbUint(buffer, 4, fill)
	chrome = pbBytes(chrome, 1, chromeConfig)
	source = pbBytes(source, 1, []byte("org.chromium.trace_event")) // name
	source = pbUint(source, 2, 0)                                   // target_buffer
	source = pbBytes(source, 101, chrome)                           // chrome_config
	dataSource = pbBytes(dataSource, 1, source)
	config = pbBytes(config, 1, buffer)     // buffers
	config = pbBytes(config, 2, dataSource) // data_sources
	return config
}

func pbUint(b []byte, field int, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, protowire.Number(field), protowire.VarintType), v)
}

func pbBytes(b []byte, field int, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, protowire.Number(field), protowire.BytesType), v)
}

// sampleCategories is all a force arms. With devtools.timeline on, Blink
// has V8 take a sample for the events that call into V8 without needing
// a stack: FunctionCall (Blink calling a JS function: a timer, a
// listener, a callback) and TimeStamp (console.timeStamp), and for
// nothing else. The stack category,
// disabled-by-default-devtools.timeline.stack, stays off: with it every
// event that records a JS stack samples too, rendering included (Paint,
// Layout, an EventDispatch with no listener), which a paused page still
// does.
var sampleCategories = []string{"devtools.timeline"}

// armed is the browser's tracing, on for a force.
type armed struct {
	b *cdp.Browser
	// on is the session tracing was started on: the browser's, or a page
	// target's (pagesOf).
	on       cdproto.Session
	complete <-chan jsonv2.Value
	stop     func() // ends the subscription
	unlock   func()
	once     sync.Once
}

// arm enables categories on b until disarm, for a force, through the
// session on (pagesOf). The trace is Perfetto's protobuf
// (perfettoConfig), returned as a stream that disarm closes unread.
func arm(ctx context.Context, b *cdp.Browser, on cdproto.Session, categories []string) (*armed, error) {
	return armFor(ctx, b, on, "forcesample", false, categories)
}

// armFor arms for holder; a long holder keeps tracing for the session
// (LockTracing), in a ring buffer.
func armFor(ctx context.Context, b *cdp.Browser, on cdproto.Session, holder string, long bool, categories []string) (*armed, error) {
	unlock, err := b.LockTracing(ctx, holder, long)
	var busy *cdp.TracingBusyError
	if errors.As(err, &busy) {
		return nil, wire.Errorf(wire.UnsupportedOperation,
			"%s needs the browser's tracing, but %s holds it: "+
				`POST /session/{id}/wdext/memory/gc-log {"collect": false} stops it`, holder, busy.Holder)
	}
	if err != nil {
		return nil, err
	}
	complete, stop := on.Subscribe(tracing.TracingComplete.Method)
	a := &armed{b: b, on: on, complete: complete, stop: stop, unlock: unlock}
	_, err = cdproto.Call(ctx, on, tracing.Start, tracing.StartParams{
		TransferMode:   tracing.StartTransferModeReturnAsStream,
		StreamFormat:   tracing.StreamFormatProto,
		PerfettoConfig: perfettoConfig(categories, long),
	})
	if err != nil {
		if ctx.Err() != nil {
			// Cancelled while the browser may be starting to trace all
			// the same: end it, or every later force finds tracing on.
			go endTracing(b, on, complete, a.stop, unlock) // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
			return nil, err
		}
		a.stop()
		unlock()
		return nil, tracingRefused(holder, err)
	}
	return a, nil
}

// disarm ends tracing and returns once it has fully stopped
// (tracingComplete): only then is the category off in every renderer
// (measured: a console.timeStamp evaluated right after takes no sample).
// The trace is not read: its stream is closed. If the flush outlasts
// ctx, disarm returns anyway (no error: the samples are taken), and the
// browser's tracing stays locked until the flush ends.
func (a *armed) disarm(ctx context.Context) error {
	err := errors.New("already disarmed")
	a.once.Do(func() {
		if _, err = cdproto.Call(ctx, a.on, tracing.End, cdproto.Empty{}); err != nil {
			// Tracing may still be on (the end timed out): the lock is
			// held until it is off.
			go endTracing(a.b, a.on, a.complete, a.stop, a.unlock) // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
			return
		}
		select {
		case raw, ok := <-a.complete:
			a.stop()
			a.unlock()
			closeTrace(a.on, raw, ok)
		case <-ctx.Done():
			// A late flush (a browser still starting processes, a loaded
			// machine): the samples are taken, so the caller is done; the
			// browser's tracing stays locked until the flush ends.
			go func() { // owned by the arm: ends at tracingComplete, a lost connection or flushTimeout
				defer a.unlock()
				defer a.stop()
				awaitComplete(a.b, a.on, a.complete, time.After(flushTimeout))
			}()
		}
	})
	return err
}

// closeTrace closes the stream of the trace a tracingComplete (ok: one
// was received) hands over, unread.
func closeTrace(on cdproto.Session, raw jsonv2.Value, ok bool) {
	var c tracing.EventTracingComplete
	if ok && jsonv2.Unmarshal(raw, &c) == nil && c.Stream != "" {
		closeStream(on, c.Stream)
	}
}

// closeStream closes a stream of the session's, in the background.
func closeStream(b cdproto.Session, h cdpio.StreamHandle) {
	go func() { // owned by the stream: bounded by its timeout
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = cdproto.Call(ctx, b, cdpio.Close, cdpio.CloseParams{Handle: h})
	}()
}

// flushTimeout bounds how long a late trace flush keeps the next force
// waiting.
const flushTimeout = 30 * time.Second

// endTracing ends a tracing session whose start or end was cut short, and
// releases the browser's tracing once it is off (complete is the
// subscription to tracingComplete on the session tracing was started on,
// stopped by stop).
func endTracing(b *cdp.Browser, on cdproto.Session, complete <-chan jsonv2.Value, stop, unlock func()) {
	defer unlock()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if _, err := cdproto.Call(ctx, on, tracing.End, cdproto.Empty{}); err != nil {
		return // not started after all, or the browser is gone
	}
	awaitComplete(b, on, complete, ctx.Done())
}

// awaitComplete waits for tracingComplete (and closes the trace's
// stream), a lost connection, or timeout.
func awaitComplete[T any](b *cdp.Browser, on cdproto.Session, complete <-chan jsonv2.Value, timeout <-chan T) {
	select {
	case raw, ok := <-complete:
		closeTrace(on, raw, ok)
	case <-b.Done():
	case <-timeout:
	}
}

// tracingRefused is the error of a Tracing.start the browser refused: as
// "unsupported operation" when another client traces (chromedriver's
// performance log with perfLoggingPrefs.traceCategories, DevTools), which
// wdext cannot stop.
func tracingRefused(who string, err error) error {
	if cdp.IsTracingStarted(err) {
		return wire.Errorf(wire.UnsupportedOperation,
			"%s needs the browser's tracing, but another client's tracing session is running "+
				"(chromedriver's performance log with perfLoggingPrefs.traceCategories, DevTools): %v", who, err)
	}
	return err
}
