package measurement

import (
	"encoding/json"
	"math/rand/v2"
	"slices"

	"github.com/wdext/wdext/wire"
)

// IntermediateMemoryBreakdownEntry is the spec's intermediate memory
// breakdown entry (§2.2): bytes an implementation measured, the realms they
// belong to, and implementation-defined type names. Memory outside the
// measuring agent cluster's address space must be reported with Bytes 0.
type IntermediateMemoryBreakdownEntry struct {
	Bytes  uint64
	Realms []*Realm
	Types  []string
}

// Shuffler randomizes the order of n items. *math/rand/v2.Rand satisfies it;
// tests pass a deterministic one. A nil Shuffler uses math/rand/v2.
type Shuffler interface {
	Shuffle(n int, swap func(i, j int))
}

// CreateNewMemoryMeasurement implements §3.3 "create a new memory
// measurement": Bytes is the sum of the entries (steps 1–2), Breakdown holds
// one empty entry (step 4) and the converted entries (step 5), shuffled by s
// (step 6) so that the empty entry lands at a random position.
//
// Beyond the spec's steps, converted entries whose attribution and types are
// equal as sets are merged by summing bytes. The spec's cross-origin example
// reports a single 1,400,000-byte entry for four realms inside foo.com, and
// separate entries would disclose how the cross-origin frame is built.
func CreateNewMemoryMeasurement(intermediate []IntermediateMemoryBreakdownEntry, s Shuffler) wire.MemoryMeasurement {
	var bytes uint64
	for _, e := range intermediate {
		bytes += e.Bytes
	}
	breakdown := []wire.MemoryBreakdownEntry{{Attribution: []wire.MemoryAttribution{}, Types: []string{}}}
	index := map[string]int{} // entry key → position in breakdown
	for _, e := range intermediate {
		entry := CreateNewMemoryBreakdownEntry(e, s)
		k := entryKey(entry)
		if i, ok := index[k]; ok {
			breakdown[i].Bytes += entry.Bytes
			continue
		}
		index[k] = len(breakdown)
		breakdown = append(breakdown, entry)
	}
	shuffle(s, len(breakdown), func(i, j int) { breakdown[i], breakdown[j] = breakdown[j], breakdown[i] })
	return wire.MemoryMeasurement{Bytes: bytes, Breakdown: breakdown}
}

// CreateNewMemoryBreakdownEntry implements §3.3 "create a new memory
// breakdown entry": one attribution per realm (steps 1–2) and the types in
// an order shuffled by s (steps 3–4).
//
// Realms and types are sets in the spec, so repeated attributions (several
// realms aggregated into one cross-origin container) and repeated types are
// listed once; the page could not tell the copies apart anyway.
func CreateNewMemoryBreakdownEntry(e IntermediateMemoryBreakdownEntry, s Shuffler) wire.MemoryBreakdownEntry {
	attribution := []wire.MemoryAttribution{}
	seen := map[string]bool{}
	for _, r := range e.Realms {
		a := CreateNewMemoryAttribution(r)
		if k := attributionKey(a); !seen[k] {
			seen[k] = true
			attribution = append(attribution, a)
		}
	}
	types := []string{}
	for _, t := range e.Types {
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	shuffle(s, len(types), func(i, j int) { types[i], types[j] = types[j], types[i] })
	return wire.MemoryBreakdownEntry{Bytes: e.Bytes, Attribution: attribution, Types: types}
}

// CreateNewMemoryAttribution implements §3.3 "create a new memory
// attribution": a cross-origin aggregated token hides the realm's URL and
// scope behind sentinels (step 2); otherwise the realm reports its creation
// URL and global interface (steps 3–4). The container is the token's.
func CreateNewMemoryAttribution(r *Realm) wire.MemoryAttribution {
	token := r.MemoryAttributionToken()
	if token.CrossOriginAggregated {
		return wire.MemoryAttribution{URL: wire.CrossOriginURL, Container: token.Container, Scope: wire.ScopeCrossOriginAggregated}
	}
	return wire.MemoryAttribution{URL: r.URL, Container: token.Container, Scope: r.Global}
}

func shuffle(s Shuffler, n int, swap func(i, j int)) {
	if s == nil {
		rand.Shuffle(n, swap)
		return
	}
	s.Shuffle(n, swap)
}

// attributionKey identifies an attribution by value (Container is a pointer).
func attributionKey(a wire.MemoryAttribution) string {
	b, _ := json.Marshal(a) // cannot fail: strings and a pointer to strings
	return string(b)
}

// entryKey identifies an entry by its attribution and types as sets.
func entryKey(e wire.MemoryBreakdownEntry) string {
	attrs := make([]string, len(e.Attribution))
	for i, a := range e.Attribution {
		attrs[i] = attributionKey(a)
	}
	slices.Sort(attrs)
	types := slices.Sorted(slices.Values(e.Types))
	b, _ := json.Marshal([2][]string{attrs, types})
	return string(b)
}
