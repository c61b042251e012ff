package webkitgtk_test

import (
	"slices"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/webkitgtk/webkitgtktest"
	"github.com/wdext/wdext/internal/e2e"
	"github.com/wdext/wdext/memory"
	"github.com/wdext/wdext/memory/debuggermemory"
)

// BenchmarkWebKitGTK times what a WebKitGTK session costs through wdext:
// new session + delete, and the memory commands on the memory test page
// (10 MiB in the page, 20 MiB in a cross-site iframe, 50 MiB in a worker):
//
//	go test ./engine/webkitgtk -run XXX -bench WebKitGTK -benchtime 20x
func BenchmarkWebKitGTK(b *testing.B) {
	env := webkitgtktest.Start(b, memory.Register, debuggermemory.Register)
	pages := e2e.ServePages(b, e2e.Testdata(), nil)
	report := func(b *testing.B, lat []time.Duration) {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	}
	b.Run("session", func(b *testing.B) {
		var created, deleted []time.Duration
		for range b.N {
			t0 := time.Now()
			id, r := newSession(b, env.URL, map[string]any{})
			assert.Equal(b, r.Status, 200, "%s", r.Value)
			t1 := time.Now()
			do(b, "DELETE", env.URL+"/session/"+id, nil)
			created, deleted = append(created, t1.Sub(t0)), append(deleted, time.Since(t1))
		}
		slices.Sort(created)
		slices.Sort(deleted)
		b.ReportMetric(float64(created[len(created)/2].Microseconds())/1000, "new-median-ms")
		b.ReportMetric(float64(deleted[len(deleted)/2].Microseconds())/1000, "delete-median-ms")
	})
	id, r := newSession(b, env.URL, map[string]any{})
	assert.Equal(b, r.Status, 200, "%s", r.Value)
	s := env.URL + "/session/" + id
	do(b, "POST", s+"/url", map[string]any{"url": pages.A + "/memory/top.html?mb=10&cross=" + pages.B + "&crossmb=20&workermb=50"})
	do(b, "POST", s+"/execute/async", map[string]any{"script": "window.ready.then(() => arguments[0]())", "args": []any{}})
	for _, c := range []struct {
		name, path string
		body       map[string]any
	}{
		{"measure", "/wdext/memory/measure", map[string]any{"source": "engine"}},
		{"gc", "/wdext/memory/gc", map[string]any{}},
		{"census", "/wdext/memory/census", map[string]any{}},
		{"census-all", "/wdext/memory/census", map[string]any{"targets": "all"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for range b.N {
				t0 := time.Now()
				r := do(b, "POST", s+c.path, c.body)
				lat = append(lat, time.Since(t0))
				assert.Equal(b, r.Status, 200, "%s", r.Value)
			}
			report(b, lat)
		})
	}
}
