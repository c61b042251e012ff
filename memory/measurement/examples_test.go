package measurement

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wdext/wdext/wire"
	"gotest.tools/v3/assert"
)

// The spec's worked examples (§1.1 of both drafts), transcribed to JSON in
// testdata: zh-*.json from the newer draft, en-*.json from the older one.
// Each is rebuilt here from a realm tree through CreateNewMemoryMeasurement.

const (
	exampleCom = "https://example.com"
	fooCom     = "https://foo.com"
	barCom     = "https://bar.com"
)

var (
	top = &Realm{Global: wire.ScopeWindow, URL: exampleCom, Origin: exampleCom}

	// <iframe id="example-id" src="redirect.html?target=iframe.html">
	sameOriginIframe = &Realm{
		Global: wire.ScopeWindow, URL: exampleCom + "/iframe.html", Origin: exampleCom, Parent: top,
		Container: &ContainerElement{LocalName: "iframe", ID: "example-id", Src: "redirect.html?target=iframe.html"},
	}
	worker        = &Realm{Global: wire.ScopeDedicatedWorker, URL: exampleCom + "/worker.js", Origin: exampleCom, Parent: top}
	serviceWorker = &Realm{Global: wire.ScopeServiceWorker, URL: exampleCom + "/service-worker.js", Origin: exampleCom}

	// <iframe id="example-id" src="https://foo.com/iframe1">, and what
	// foo.com puts inside it. The inner elements' attributes must not
	// show up in any result.
	fooIframe1 = &Realm{
		Global: wire.ScopeWindow, URL: fooCom + "/iframe1", Origin: fooCom, Parent: top,
		Container: &ContainerElement{LocalName: "iframe", ID: "example-id", Src: fooCom + "/iframe1"},
	}
	fooIframe2 = &Realm{
		Global: wire.ScopeWindow, URL: fooCom + "/iframe2", Origin: fooCom, Parent: fooIframe1,
		Container: &ContainerElement{LocalName: "iframe", ID: "foo-secret", Src: "iframe2"},
	}
	barIframe2 = &Realm{
		Global: wire.ScopeWindow, URL: barCom + "/iframe2", Origin: barCom, Parent: fooIframe1,
		Container: &ContainerElement{LocalName: "object", ID: "bar-secret", Data: barCom + "/iframe2"},
	}
	fooWorker      = &Realm{Global: wire.ScopeDedicatedWorker, URL: fooCom + "/worker.js", Origin: fooCom, Parent: fooIframe1}
	exampleIframe2 = &Realm{
		Global: wire.ScopeWindow, URL: exampleCom + "/iframe2", Origin: exampleCom, Parent: fooIframe1,
		Container: &ContainerElement{LocalName: "iframe", ID: "foo-secret", Src: exampleCom + "/iframe2"},
	}
)

func entry(bytes uint64, realms []*Realm, types ...string) IntermediateMemoryBreakdownEntry {
	return IntermediateMemoryBreakdownEntry{Bytes: bytes, Realms: realms, Types: types}
}

func realms(r ...*Realm) []*Realm { return r }

var examples = []struct {
	name string
	// intermediate is what an implementation might have measured; nil
	// when no intermediate measurement yields the example.
	intermediate []IntermediateMemoryBreakdownEntry
	// olderDraft says the older draft has the example too (en-<name>.json).
	olderDraft bool
	// typo is the newer draft's literal total where it does not match its
	// own entries; the algorithm's total is their sum.
	typo uint64
}{
	{
		name:         "simple-page",
		intermediate: []IntermediateMemoryBreakdownEntry{entry(1_000_000, realms(top), "JS", "DOM")},
		olderDraft:   true,
	},
	{
		name:       "total-only", // "the implementation provides only the total"
		olderDraft: true,
	},
	{
		name:         "no-types",
		intermediate: []IntermediateMemoryBreakdownEntry{entry(1_000_000, realms(top))},
		olderDraft:   true,
	},
	{
		name: "same-origin-iframe",
		intermediate: []IntermediateMemoryBreakdownEntry{
			entry(1_000_000, realms(top), "DOM", "JS"),
			entry(500_000, realms(sameOriginIframe), "JS", "DOM"),
		},
		olderDraft: true,
	},
	{
		name: "same-origin-iframe-lumped",
		intermediate: []IntermediateMemoryBreakdownEntry{
			entry(1_500_000, realms(top, sameOriginIframe), "JS", "DOM"),
		},
		olderDraft: true,
	},
	{
		name: "dedicated-worker",
		intermediate: []IntermediateMemoryBreakdownEntry{
			entry(1_000_000, realms(top), "JS", "DOM"),
			entry(800_000, realms(worker), "JS"),
		},
		olderDraft: true,
	},
	{
		name:         "service-worker",
		intermediate: []IntermediateMemoryBreakdownEntry{entry(1_000_000, realms(serviceWorker), "JS")},
		olderDraft:   true,
	},
	{
		// example.com > foo.com/iframe1 > {foo.com/iframe2,
		// bar.com/iframe2, foo.com/worker.js}: 2,400,000 bytes, of which
		// 1,400,000 cross-origin-aggregated under example-id.
		name: "cross-origin-iframe",
		intermediate: []IntermediateMemoryBreakdownEntry{
			entry(1_000_000, realms(top), "JS", "DOM"),
			entry(500_000, realms(fooIframe1), "DOM", "JS"),
			entry(200_000, realms(fooIframe2), "DOM", "JS"),
			entry(300_000, realms(barIframe2), "JS", "DOM"),
			entry(400_000, realms(fooWorker), "JS", "DOM"),
		},
		olderDraft: true,
	},
	{
		// foo.com/iframe1 lives in another address space, so it is
		// reported with 0 bytes (§2.2).
		name: "address-space",
		intermediate: []IntermediateMemoryBreakdownEntry{
			entry(1_000_000, realms(top), "JS", "DOM"),
			entry(0, realms(fooIframe1), "JS", "DOM"),
		},
		typo: 100_000,
	},
	{
		// example.com > foo.com/iframe1 > example.com/iframe2: 1,700,000
		// bytes; the same-origin grandchild is revealed under example-id.
		name: "same-origin-in-cross-origin",
		intermediate: []IntermediateMemoryBreakdownEntry{
			entry(1_000_000, realms(top), "DOM", "JS"),
			entry(500_000, realms(fooIframe1), "DOM", "JS"),
			entry(200_000, realms(exampleIframe2), "JS", "DOM"),
		},
		olderDraft: true,
	},
	{
		// As above, but the cross-origin iframe was not measured.
		name: "cross-origin-not-measured",
		intermediate: []IntermediateMemoryBreakdownEntry{
			entry(1_000_000, realms(top), "JS", "DOM"),
			entry(0, realms(fooIframe1), "JS", "DOM"),
			entry(200_000, realms(exampleIframe2), "JS", "DOM"),
		},
	},
}

func TestSpecExamples(t *testing.T) {
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			want := readExample(t, "zh-"+ex.name+".json")
			if ex.typo != 0 {
				assert.Equal(t, want.Bytes, ex.typo)
				assert.Error(t, Validate(want), "bytes: 100000, but breakdown[*].bytes sum to 1000000")
				want.Bytes = 0
				for _, e := range want.Breakdown {
					want.Bytes += e.Bytes
				}
			}
			assert.NilError(t, Validate(want))
			if ex.intermediate != nil {
				got := CreateNewMemoryMeasurement(ex.intermediate, noShuffle{})
				assert.NilError(t, Validate(got))
				assert.DeepEqual(t, canonical(got), canonical(want))
			}

			if !ex.olderDraft {
				return
			}
			t.Run("older draft", func(t *testing.T) {
				older := readExample(t, "en-"+ex.name+".json")
				// The older draft's results are the newer draft's
				// without the empty entry, which the newer rules miss.
				if len(older.Breakdown) > 0 {
					assert.Error(t, Validate(older), "breakdown: no empty entry {bytes: 0, attribution: [], types: []}; one is inserted whenever the breakdown is not empty")
				}
				want.Breakdown = slices.DeleteFunc(want.Breakdown, wire.MemoryBreakdownEntry.IsEmpty)
				assert.DeepEqual(t, canonical(older), canonical(want))
			})
		})
	}
}

// readExample decodes a transcribed example, accepting the older draft's
// name for types.
func readExample(t *testing.T, name string) wire.MemoryMeasurement {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	assert.NilError(t, err)
	b = []byte(strings.ReplaceAll(string(b), `"userAgentSpecificTypes"`, `"types"`))
	var m wire.MemoryMeasurement
	assert.NilError(t, json.Unmarshal(b, &m))
	return m
}

// canonical orders m's lists, whose order the spec randomizes, so results
// compare by content.
func canonical(m wire.MemoryMeasurement) wire.MemoryMeasurement {
	out := wire.MemoryMeasurement{Bytes: m.Bytes}
	for _, e := range m.Breakdown {
		e.Types = slices.Sorted(slices.Values(e.Types))
		out.Breakdown = append(out.Breakdown, e)
	}
	slices.SortFunc(out.Breakdown, func(a, b wire.MemoryBreakdownEntry) int {
		return cmp.Or(cmp.Compare(entryKey(a), entryKey(b)), cmp.Compare(a.Bytes, b.Bytes))
	})
	return out
}

// noShuffle keeps the spec's construction order.
type noShuffle struct{}

func (noShuffle) Shuffle(int, func(i, j int)) {}
