package leaks

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/wire"
)

// objectClass is the class that groups node i among leaked objects: V8
// "object" nodes named after their constructor. V8's own objects
// ("system / …"), globals and prototypes ("… / url") and nameless ones
// ("(…)") are not the page's objects and are left out, as are functions
// (a closure is made whenever a function expression runs; what holds it
// is the leak, and is reported by its own kind).
func objectClass(s *heapsnapshot.Snapshot, i int) (string, bool) {
	if s.Type(i) != "object" {
		return "", false
	}
	name := s.Name(i)
	if name == "" || strings.HasPrefix(name, "system /") || strings.HasPrefix(name, "(") || strings.Contains(name, " / ") {
		return "", false
	}
	return name, true
}

// domName names a DOM node the way a developer would find it: the class
// of its wrapper's prototype and a selector from the tag V8 shows,
// "HTMLDivElement div.dialog" for a node named <div class="dialog">.
func domName(s *heapsnapshot.Snapshot, i int) string {
	name := s.Name(i)
	sel := selector(name)
	class := ""
	for e := range s.Edges(i) {
		if e.Type == "property" && e.Name == "__proto__" {
			class, _, _ = strings.Cut(s.Name(e.To), " ")
			break
		}
	}
	switch {
	case class != "" && sel != "":
		return class + " " + sel
	case sel != "":
		return sel
	}
	return strings.TrimPrefix(name, "Detached ")
}

// selector turns Blink's node name `<div id="a" class="b c">` into
// "div#a.b.c"; "" for a name that is not a tag.
func selector(name string) string {
	if !strings.HasPrefix(name, "<") || !strings.HasSuffix(name, ">") {
		return ""
	}
	body := strings.TrimSuffix(strings.TrimPrefix(name, "<"), ">")
	tag, attrs, _ := strings.Cut(body, " ")
	out := tag
	for attrs != "" {
		attrs = strings.TrimLeft(attrs, " ")
		key, rest, ok := strings.Cut(attrs, `="`)
		if !ok {
			break
		}
		val, rest2, _ := strings.Cut(rest, `"`)
		attrs = rest2
		switch key {
		case "id":
			out += "#" + val
		case "class":
			for _, c := range strings.Fields(val) {
				out += "." + c
			}
		}
	}
	return out
}

// collectionKind says whether node i is a collection whose growth is
// counted: an Array, Map, Set or plain Object.
func collectionKind(s *heapsnapshot.Snapshot, i int) (string, bool) {
	if s.Type(i) != "object" {
		return "", false
	}
	switch name := s.Name(i); name {
	case "Array", "Map", "Set", "Object":
		return name, true
	}
	return "", false
}

// entries counts a collection's entries and the bytes of its backing
// store. An Array counts its elements, an Object its properties, a Map
// or Set the entries of its hash table that hold a key or value other
// than a small integer (V8 snapshots leave those out: a Map from small
// integers to small integers looks empty).
func entries(s *heapsnapshot.Snapshot, i int, kind string) (count int, bytes int64) {
	switch kind {
	case "Array":
		for e := range s.Edges(i) {
			switch {
			case e.Type == "element":
				count++
			case e.Type == "internal" && e.Name == "elements":
				bytes = s.SelfSize(e.To)
			}
		}
	case "Object":
		for e := range s.Edges(i) {
			switch {
			case e.Type == "property" && e.Name != "__proto__":
				count++
			case e.Type == "internal" && e.Name == "properties":
				bytes = s.SelfSize(e.To)
			}
		}
	case "Map", "Set":
		for e := range s.Edges(i) {
			if e.Type == "internal" && e.Name == "table" {
				return tableEntries(s, e.To, kind == "Map"), s.SelfSize(e.To)
			}
		}
	}
	return count, bytes
}

// tableEntries counts the entries of an OrderedHashMap or OrderedHashSet
// from the slots its internal edges name. A set's entry is a key and a
// chain link; a map's is a key, a value and a link, three slots, and the
// first entry starts at 3 + the number of buckets (a power of 2), so
// keys sit at a slot ≡ 1 or 2 (mod 3) and values one further.
func tableEntries(s *heapsnapshot.Snapshot, table int, isMap bool) int {
	var slots []int
	for e := range s.Edges(table) {
		if e.Type != "internal" {
			continue
		}
		if k, err := strconv.Atoi(e.Name); err == nil && k >= 0 {
			slots = append(slots, k)
		}
	}
	if !isMap {
		return len(slots)
	}
	key := 2
	for _, k := range slots {
		if k%3 == 1 {
			key = 1
			break
		}
	}
	seen := map[int]bool{}
	for _, k := range slots {
		seen[(k-key)/3] = true
	}
	return len(seen)
}

// collectionName names a collection after what holds it:
// "Window.cache (Map)", "Foo.items (Array)", "Window.list[3] (Set)".
func collectionName(s *heapsnapshot.Snapshot, p *paths, i int, kind string) string {
	owner := "(unreachable)"
	if e, from, ok := p.parentEdge(i); ok {
		owner = displayName(s, from)
		switch e.Type {
		case "element", "hidden":
			owner += "[" + strconv.Itoa(e.Index) + "]"
		default:
			owner += "." + e.Name
		}
	}
	return owner + " (" + kind + ")"
}

// createdFrom is the youngest frame of page script in the members'
// allocation stacks, when more than half of the members that have a
// stack share it; null otherwise. Page script is a frame with a script
// URL: V8's pseudo-frames ("(V8 API)", where Blink's C++ made a wrapper
// for the script below it) and the driver's own scripts (chromedriver's
// executeScript and atoms, given no URL) are skipped to the page's
// function that called them.
//
// The majority guards against stale stacks: V8 keeps an object's stack
// by its address and moves it with the object only until the tracker has
// given the object an id, so an object a later GC moves shows what was
// allocated at its new address before, or nothing (docs/leaks.md, with
// the measurements). Scattered stacks share no frame with a majority.
func createdFrom(s *heapsnapshot.Snapshot, members []int) *wire.LeakFrame {
	byTrace := map[uint32]int64{} // each stack is read once
	for _, m := range members {
		if id := s.TraceNodeID(m); id != 0 {
			byTrace[id]++
		}
	}
	votes := map[wire.LeakFrame]int64{}
	var traced int64
	for id, n := range byTrace {
		fr, has, ok := traceFrame(s, id)
		if has {
			traced += n
		}
		if ok {
			votes[fr] += n
		}
	}
	return majority(votes, traced)
}

// pageFrame is the youngest page frame of node i's allocation stack; has
// says whether V8 kept a stack for it at all.
func pageFrame(s *heapsnapshot.Snapshot, i int) (fr wire.LeakFrame, has, ok bool) {
	id := s.TraceNodeID(i)
	if id == 0 {
		return fr, false, false
	}
	return traceFrame(s, id)
}

// traceFrame is the youngest page frame of the allocation stack of trace
// node id (see pageFrame).
func traceFrame(s *heapsnapshot.Snapshot, id uint32) (fr wire.LeakFrame, has, ok bool) {
	stack, has := s.Stack(id)
	k := slices.IndexFunc(stack, func(f wire.Frame) bool { return f.Source != "" })
	if k < 0 {
		return fr, has, false
	}
	f := stack[k]
	return wire.LeakFrame{FunctionName: f.FunctionDisplayName, URL: f.Source, Line: f.Line, Column: f.Column}, has, true
}

// majority is the frame with the most votes when they are more than half
// of total; ties go to the first frame in frameLess order.
func majority(votes map[wire.LeakFrame]int64, total int64) *wire.LeakFrame {
	var best *wire.LeakFrame
	var bestN int64
	for fr, v := range votes {
		if v > bestN || v == bestN && frameLess(fr, *best) {
			fr := fr
			best, bestN = &fr, v
		}
	}
	if best == nil || 2*bestN <= total {
		return nil
	}
	return best
}

func frameLess(a, b wire.LeakFrame) bool {
	return cmp.Or(cmp.Compare(a.URL, b.URL), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.FunctionName, b.FunctionName)) < 0
}
