package measurement

import (
	"errors"
	"math"
	"testing"

	"github.com/wdext/wdext/wire"
	"gotest.tools/v3/assert"
)

func TestValidate(t *testing.T) {
	empty := wire.MemoryBreakdownEntry{}
	window := wire.MemoryAttribution{URL: exampleCom, Scope: wire.ScopeWindow}
	box := &wire.MemoryAttributionContainer{ID: "example-id", Src: fooCom + "/iframe1"}
	crossOrigin := wire.MemoryAttribution{URL: wire.CrossOriginURL, Container: box, Scope: wire.ScopeCrossOriginAggregated}
	one := func(bytes uint64, a ...wire.MemoryAttribution) wire.MemoryBreakdownEntry {
		return wire.MemoryBreakdownEntry{Bytes: bytes, Attribution: a, Types: []string{"JS"}}
	}
	for _, tc := range []struct {
		name string
		m    wire.MemoryMeasurement
		want string // "" for valid
	}{
		{name: "total only", m: wire.MemoryMeasurement{Bytes: 5}},
		{name: "nothing at all", m: wire.MemoryMeasurement{}},
		{name: "minimal", m: wire.MemoryMeasurement{Bytes: 5, Breakdown: []wire.MemoryBreakdownEntry{one(5, window), empty}}},
		{name: "empty entry only", m: wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty}}},
		{name: "two empty entries", m: wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, empty}}},
		{name: "unattributed bytes", m: wire.MemoryMeasurement{Bytes: 5, Breakdown: []wire.MemoryBreakdownEntry{{Bytes: 5}, empty}}},
		{name: "zero bytes outside the address space", m: wire.MemoryMeasurement{Bytes: 5, Breakdown: []wire.MemoryBreakdownEntry{one(5, window), one(0, crossOrigin), empty}}},
		{
			name: "every scope",
			m: wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, one(0,
				window,
				wire.MemoryAttribution{URL: exampleCom + "/w.js", Container: box, Scope: wire.ScopeDedicatedWorker},
				wire.MemoryAttribution{URL: exampleCom + "/s.js", Scope: wire.ScopeSharedWorker},
				wire.MemoryAttribution{URL: exampleCom + "/sw.js", Scope: wire.ScopeServiceWorker},
				crossOrigin,
			)}},
		},
		{
			name: "total differs from the sum",
			m:    wire.MemoryMeasurement{Bytes: 4, Breakdown: []wire.MemoryBreakdownEntry{one(5, window), empty}},
			want: "bytes: 4, but breakdown[*].bytes sum to 5",
		},
		{
			name: "sum overflows",
			m:    wire.MemoryMeasurement{Bytes: 1, Breakdown: []wire.MemoryBreakdownEntry{one(math.MaxUint64, window), one(2, window), empty}},
			want: "bytes: the sum of breakdown[*].bytes overflows uint64",
		},
		{
			name: "no empty entry",
			m:    wire.MemoryMeasurement{Bytes: 5, Breakdown: []wire.MemoryBreakdownEntry{one(5, window)}},
			want: "breakdown: no empty entry {bytes: 0, attribution: [], types: []}; one is inserted whenever the breakdown is not empty",
		},
		{
			name: "zero bytes with types is not the empty entry",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{{Types: []string{"JS"}}}},
			want: "breakdown: no empty entry {bytes: 0, attribution: [], types: []}; one is inserted whenever the breakdown is not empty",
		},
		{
			name: "unknown scope",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, one(0, wire.MemoryAttribution{URL: exampleCom, Scope: "AudioWorkletGlobalScope"})}},
			want: `breakdown[1].attribution[0].scope: "AudioWorkletGlobalScope" is not one of ["Window" "DedicatedWorkerGlobalScope" "SharedWorkerGlobalScope" "ServiceWorkerGlobalScope" "cross-origin-aggregated"]`,
		},
		{
			name: "sentinel URL with a same-origin scope",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, one(0, wire.MemoryAttribution{URL: wire.CrossOriginURL, Container: box, Scope: wire.ScopeWindow})}},
			want: `breakdown[1].attribution[0].url: "cross-origin-url" requires scope "cross-origin-aggregated", got "Window"`,
		},
		{
			name: "cross-origin scope with a real URL",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, one(0, wire.MemoryAttribution{URL: fooCom + "/iframe1", Container: box, Scope: wire.ScopeCrossOriginAggregated})}},
			want: `breakdown[1].attribution[0].url: "https://foo.com/iframe1", but scope "cross-origin-aggregated" requires "cross-origin-url"`,
		},
		{
			name: "empty URL",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, one(0, wire.MemoryAttribution{Scope: wire.ScopeWindow})}},
			want: "breakdown[1].attribution[0].url: empty; a same-origin realm reports its URL",
		},
		{
			name: "cross-origin without container",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, one(0, wire.MemoryAttribution{URL: wire.CrossOriginURL, Scope: wire.ScopeCrossOriginAggregated})}},
			want: `breakdown[1].attribution[0].container: missing; scope "cross-origin-aggregated" always names the top-most cross-origin container`,
		},
		{
			name: "service worker with container",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, one(0, wire.MemoryAttribution{URL: exampleCom + "/sw.js", Container: box, Scope: wire.ScopeServiceWorker})}},
			want: `breakdown[1].attribution[0].container: present; scope "ServiceWorkerGlobalScope" never has a container`,
		},
		{
			name: "shared worker with container",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, one(0, wire.MemoryAttribution{URL: exampleCom + "/s.js", Container: box, Scope: wire.ScopeSharedWorker})}},
			want: `breakdown[1].attribution[0].container: present; scope "SharedWorkerGlobalScope" never has a container`,
		},
		{
			name: "duplicate type",
			m:    wire.MemoryMeasurement{Breakdown: []wire.MemoryBreakdownEntry{empty, {Types: []string{"JS", "DOM", "JS"}}}},
			want: `breakdown[1].types[2]: duplicate "JS"; types is a set`,
		},
		{
			name: "everything at once, in order",
			m: wire.MemoryMeasurement{Bytes: 1, Breakdown: []wire.MemoryBreakdownEntry{
				one(5, wire.MemoryAttribution{URL: exampleCom}, wire.MemoryAttribution{URL: wire.CrossOriginURL, Scope: wire.ScopeCrossOriginAggregated}),
			}},
			want: `breakdown[0].attribution[0].scope: "" is not one of ["Window" "DedicatedWorkerGlobalScope" "SharedWorkerGlobalScope" "ServiceWorkerGlobalScope" "cross-origin-aggregated"]` + "\n" +
				`breakdown[0].attribution[1].container: missing; scope "cross-origin-aggregated" always names the top-most cross-origin container` + "\n" +
				"bytes: 1, but breakdown[*].bytes sum to 5\n" +
				"breakdown: no empty entry {bytes: 0, attribution: [], types: []}; one is inserted whenever the breakdown is not empty",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.m)
			if tc.want == "" {
				assert.NilError(t, err)
				return
			}
			assert.Error(t, err, tc.want)
			var fe *FieldError
			assert.Assert(t, errors.As(err, &fe), "problems are *FieldError")
		})
	}
}
