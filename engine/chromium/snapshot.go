package chromium

import (
	"context"
	"errors"
	"fmt"
	"io"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/heapprofiler"

	"github.com/wdext/wdext/memory/heapsnapshot"
)

// A snapshotReader reads a streamed snapshot: heapsnapshot.Read for a
// caller that walks the graph, heapsnapshot.ReadNodes, in half the memory,
// for one that counts nodes.
type snapshotReader func(io.Reader) (*heapsnapshot.Snapshot, error)

// takeSnapshot takes a heap snapshot of the target's isolate (V8 collects
// garbage first) and reads it with read as it streams in.
func takeSnapshot(ctx context.Context, ts *targetSession, read snapshotReader) (*heapsnapshot.Snapshot, error) {
	return streamSnapshot(ctx, ts, read, func(ctx context.Context) error {
		_, err := cdproto.Call(ctx, ts.s, heapprofiler.TakeHeapSnapshot, heapprofiler.TakeHeapSnapshotParams{
			ReportProgress:      new(false),
			CaptureNumericValue: new(false),
			ExposeInternals:     new(false),
		})
		return err
	})
}

// streamSnapshot runs take, a command that makes the target send a heap
// snapshot as HeapProfiler.addHeapSnapshotChunk events before it replies
// (takeHeapSnapshot, stopTrackingHeapObjects), and parses the chunks with
// read as they arrive, through a pipe: the JSON is never held
// whole. The chunks are ~1 MB each and the connection buffers 1024 events
// per subscriber, far more than the reader ever falls behind; a chunk the
// connection dropped anyway would make the JSON malformed, an error.
func streamSnapshot(ctx context.Context, ts *targetSession, read snapshotReader, take func(context.Context) error) (*heapsnapshot.Snapshot, error) {
	ts.snap.Lock()
	defer ts.snap.Unlock()

	chunks, unsubscribe := ts.s.Subscribe(heapprofiler.AddHeapSnapshotChunk.Method)
	defer unsubscribe()
	pr, pw := io.Pipe()

	type parsed struct {
		snap *heapsnapshot.Snapshot
		err  error
	}
	done := make(chan parsed, 1)
	go func() { // owned here: waited for below
		s, err := read(pr)
		if err != nil {
			pr.CloseWithError(err) // release the feeder
		}
		done <- parsed{s, err}
	}()

	fed := make(chan struct{})
	go func() { // owned here: ends when unsubscribe closes chunks
		defer close(fed)
		for raw := range chunks {
			var ev heapprofiler.EventAddHeapSnapshotChunk
			if err := jsonv2.Unmarshal(raw, &ev); err != nil {
				pw.CloseWithError(fmt.Errorf("decoding %s: %w", heapprofiler.AddHeapSnapshotChunk.Method, err))
				continue
			}
			// After an error the pipe refuses writes at once; keep
			// draining so the subscription ends cleanly.
			io.WriteString(pw, ev.Chunk)
		}
	}()

	err := take(ctx)
	if err != nil {
		pw.CloseWithError(err)
	}
	// Every chunk was dispatched before the reply: once the subscription
	// is closed, the feeder has the last of them.
	unsubscribe()
	<-fed
	pw.Close()
	res := <-done
	if err != nil {
		return nil, err
	}
	if res.err != nil {
		if errors.Is(res.err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("the heap snapshot ended early (were chunks lost?): %w", res.err)
		}
		return nil, fmt.Errorf("reading the heap snapshot: %w", res.err)
	}
	return res.snap, nil
}
