package report

import (
	"fmt"
	"sort"
	"strings"
)

// buildDiff compares two censuses leaf by leaf: a treemap of what grew
// (by bytes), and a table of every change, the biggest first.
func buildDiff(name string, before, after *CensusNode) treemap {
	changes := leafChanges(before, after)
	tm := buildTreemap(name, grewTree(changes))
	tm.Diff = true
	tm.BeforeBytes, tm.AfterBytes = ByteSize(before.Bytes), ByteSize(after.Bytes)
	tm.Delta = signedBytes(after.Bytes - before.Bytes)
	tm.Grew = after.Bytes > before.Bytes
	tm.Rows, tm.MoreRows = diffRows(changes)
	tm.MoreBytes = ""
	return tm
}

// A change is a leaf of either census, before and after.
type change struct {
	path           string
	b, a           leaf
	dBytes, dCount int64
}

// leafChanges pairs the censuses' leaves by path: before's in their
// order, then those only after has.
func leafChanges(before, after *CensusNode) []*change {
	idx := map[string]*change{}
	var order []*change
	get := func(p string) *change {
		c := idx[p]
		if c == nil {
			c = &change{path: p}
			idx[p] = c
			order = append(order, c)
		}
		return c
	}
	for _, l := range before.leaves() {
		get(l.Path).b = l
	}
	for _, l := range after.leaves() {
		get(l.Path).a = l
	}
	for _, c := range order {
		c.dBytes, c.dCount = c.a.Bytes-c.b.Bytes, c.a.Count-c.b.Count
	}
	return order
}

// grewTree is the census of what grew, by bytes: the leaves that grew,
// under their top-level group ("objects › Foo › x" becomes "Foo › x" in
// "objects").
func grewTree(changes []*change) *CensusNode {
	grew := &CensusNode{Name: "grew"}
	groups := map[string]*CensusNode{}
	for _, c := range changes {
		if c.dBytes <= 0 {
			continue
		}
		parts := strings.Split(c.path, " › ")
		parent := grew
		if len(parts) > 1 {
			g := groups[parts[0]]
			if g == nil {
				g = &CensusNode{Name: parts[0]}
				groups[parts[0]] = g
				grew.Children = append(grew.Children, g)
			}
			parent = g
		}
		leafName := parts[len(parts)-1]
		if len(parts) > 2 {
			leafName = strings.Join(parts[1:], " › ")
		}
		parent.Children = append(parent.Children, &CensusNode{Name: leafName, Count: max(c.dCount, 0), Bytes: c.dBytes})
	}
	for _, g := range grew.Children {
		if len(g.Children) > 0 {
			for _, k := range g.Children {
				g.Count += k.Count
				g.Bytes += k.Bytes
			}
		}
		grew.Count += g.Count
		grew.Bytes += g.Bytes
	}
	return grew
}

// diffRows is the table of changes, the biggest first (it sorts
// changes), at most tableLimit rows, and how many more changes there are.
func diffRows(changes []*change) ([]censusRow, int) {
	sort.SliceStable(changes, func(i, j int) bool {
		ai, aj := abs64(changes[i].dBytes), abs64(changes[j].dBytes)
		if ai != aj {
			return ai > aj
		}
		return abs64(changes[i].dCount) > abs64(changes[j].dCount)
	})
	var rows []censusRow
	for i, c := range changes {
		if c.dBytes == 0 && c.dCount == 0 {
			continue
		}
		if len(rows) == tableLimit {
			return rows, len(changes) - i
		}
		rows = append(rows, censusRow{Path: c.path,
			Before: fmt.Sprintf("%s · %s", ByteSize(c.b.Bytes), thousands(c.b.Count)),
			After:  fmt.Sprintf("%s · %s", ByteSize(c.a.Bytes), thousands(c.a.Count)),
			Bytes:  signedBytes(c.dBytes), DCount: signed(c.dCount), Grew: c.dBytes > 0 || (c.dBytes == 0 && c.dCount > 0)})
	}
	return rows, 0
}
