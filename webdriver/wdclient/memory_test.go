package wdclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/measurement"
	"github.com/wdext/wdext/wire"
)

// The helpers send the documented parameters to the documented paths and
// decode the value, or the W3C error.
func TestMemoryCommands(t *testing.T) {
	type request struct{ method, path, body string }
	var got []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, request{r.Method, r.URL.Path, string(body)})
		switch r.URL.Path {
		case "/session/s1/wdext/memory/measure":
			wire.WriteValue(w, wire.MemoryMeasurement{Bytes: 5, Breakdown: []wire.MemoryBreakdownEntry{
				{Bytes: 5, Attribution: []wire.MemoryAttribution{{URL: "https://a.test/", Scope: wire.ScopeWindow}}, Types: []string{"JavaScript"}},
				{},
			}})
		case "/session/s1/wdext/memory/gc":
			wire.WriteValue(w, wire.GCResult{Targets: []wire.GCTarget{{Type: "page", URL: "https://a.test/", UsedBefore: 9, UsedAfter: 4}}})
		default:
			wire.WriteError(w, wire.Errorf(wire.InvalidSessionID, "no"))
		}
	}))
	defer srv.Close()
	c := &Client{URL: srv.URL + "/"}
	ctx := context.Background()

	m, err := c.MeasureMemory(ctx, "s1", MeasureOptions{})
	assert.NilError(t, err)
	assert.Equal(t, m.Bytes, uint64(5))
	assert.NilError(t, measurement.Validate(*m))
	_, err = c.MeasureMemory(ctx, "s1", MeasureOptions{Source: wire.SourceEngine, Timeout: 1500 * time.Millisecond})
	assert.NilError(t, err)
	_, err = c.MeasureMemory(ctx, "s1", MeasureOptions{Timeout: time.Microsecond})
	assert.NilError(t, err)
	r, err := c.CollectGarbage(ctx, "s1")
	assert.NilError(t, err)
	assert.DeepEqual(t, r.Targets, []wire.GCTarget{{Type: "page", URL: "https://a.test/", UsedBefore: 9, UsedAfter: 4}})
	_, err = c.MeasureMemory(ctx, "s2", MeasureOptions{})
	var we *wire.Error
	assert.Assert(t, errors.As(err, &we))
	assert.Equal(t, we.Code, wire.InvalidSessionID)

	params := func(i int) map[string]any {
		var p map[string]any
		assert.Equal(t, got[i].method, "POST")
		assert.NilError(t, json.Unmarshal([]byte(got[i].body), &p))
		return p
	}
	assert.Equal(t, got[0].path, "/session/s1/wdext/memory/measure")
	assert.Equal(t, got[3].path, "/session/s1/wdext/memory/gc")
	assert.DeepEqual(t, params(0), map[string]any{})
	assert.DeepEqual(t, params(1), map[string]any{"source": "engine", "timeout": 1500.0})
	assert.DeepEqual(t, params(2), map[string]any{"timeout": 1.0}) // rounded up, never 0
	assert.DeepEqual(t, params(3), map[string]any{})
}
