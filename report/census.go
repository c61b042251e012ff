package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// CensusNode is a census result as a tree: a {"count", "bytes"} leaf, or a
// breakdown's keys (coarse types, classes, internal types; a list's or an
// allocationStack's entries) with their totals.
type CensusNode struct {
	Name     string
	Count    int64
	Bytes    int64
	Children []*CensusNode
}

// NamedCensus is one census of a file: a "targets": "all" census has one
// per frame and worker.
type NamedCensus struct {
	Name string
	Root *CensusNode
}

// ParseCensus reads a census as `wdext census` prints it or the census
// command answers it (bare, or wrapped in {"value": …}), whatever its
// breakdown, or a "targets": "all" answer ({"targets": [{type, url,
// census}, …]}), which gives one NamedCensus per target (those with an
// error are left out).
func ParseCensus(data []byte) ([]NamedCensus, error) {
	data = unwrapValue(data)
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("not a census: %w", jsonError(data, err))
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		if ts, ok := m["targets"].([]any); ok && isTargets(ts) {
			var out []NamedCensus
			for i, x := range ts {
				t := x.(map[string]any)
				if t["census"] == nil {
					continue
				}
				root, err := censusTree(fmt.Sprintf("targets[%d].census", i), "", t["census"])
				if err != nil {
					return nil, err
				}
				typ, _ := t["type"].(string)
				url, _ := t["url"].(string)
				out = append(out, NamedCensus{Name: strings.TrimSpace(typ + " " + url), Root: root})
			}
			if len(out) == 0 {
				return nil, errors.New("census: no target has a census")
			}
			return out, nil
		}
	}
	root, err := censusTree("census", "", v)
	if err != nil {
		return nil, err
	}
	return []NamedCensus{{Root: root}}, nil
}

func isTargets(ts []any) bool {
	for _, x := range ts {
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["census"]; !ok {
			return false
		}
	}
	return true
}

// censusTree turns a decoded census value into a tree; path names the
// value in errors.
func censusTree(path, name string, v any) (*CensusNode, error) {
	n := &CensusNode{Name: name}
	switch x := v.(type) {
	case map[string]any:
		if isCount(x) {
			var err error
			if n.Count, err = integer(path+".count", x["count"]); err != nil {
				return nil, err
			}
			if n.Bytes, err = integer(path+".bytes", x["bytes"]); err != nil {
				return nil, err
			}
			return n, nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c, err := censusTree(path+"."+k, k, x[k])
			if err != nil {
				return nil, err
			}
			n.add(c)
		}
	case []any:
		for i, e := range x {
			child, label := e, fmt.Sprintf("[%d]", i)
			// An allocationStack entry: {"stack": [frames], "census": …}.
			if m, ok := e.(map[string]any); ok {
				if c, ok := m["census"]; ok {
					child, label = c, stackLabel(m)
				}
			}
			c, err := censusTree(fmt.Sprintf("%s[%d]", path, i), label, child)
			if err != nil {
				return nil, err
			}
			n.add(c)
		}
	default:
		return nil, fmt.Errorf("%s: %s where a census has {\"count\", \"bytes\"} or a breakdown's object", path, kindOf(v))
	}
	return n, nil
}

func (n *CensusNode) add(c *CensusNode) {
	n.Children = append(n.Children, c)
	n.Count += c.Count
	n.Bytes += c.Bytes
}

// isCount says whether m is a count leaf: only "count" and "bytes", as
// numbers (a class named "count" holds an object).
func isCount(m map[string]any) bool {
	if len(m) == 0 || len(m) > 2 {
		return false
	}
	for k, v := range m {
		if k != "count" && k != "bytes" {
			return false
		}
		if _, ok := v.(float64); !ok {
			return false
		}
	}
	return true
}

func integer(path string, v any) (int64, error) {
	if v == nil {
		return 0, nil
	}
	f := v.(float64)
	if f < 0 || f > 1<<53 || f != math.Trunc(f) {
		return 0, fmt.Errorf("%s: %v is not a count of items or bytes", path, f)
	}
	return int64(f), nil
}

func stackLabel(m map[string]any) string {
	if m["noStack"] == true {
		return "(no allocation stack)"
	}
	st, _ := m["stack"].([]any)
	if len(st) == 0 {
		return "(no JavaScript on the stack)"
	}
	f, _ := st[0].(map[string]any)
	fn, _ := f["functionDisplayName"].(string)
	src, _ := f["source"].(string)
	line, _ := f["line"].(float64)
	return fmt.Sprintf("%s (%s:%d)", orAnon(fn), src, int(line))
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	}
	return fmt.Sprintf("%T", v)
}

// leaves lists the census's leaves with their paths below the root
// ("objects › Foo"), largest first.
func (n *CensusNode) leaves() []leaf {
	var out []leaf
	var walk func(*CensusNode, []string)
	walk = func(c *CensusNode, path []string) {
		if len(c.Children) == 0 {
			if len(path) > 0 {
				out = append(out, leaf{Path: strings.Join(path, " › "), Count: c.Count, Bytes: c.Bytes})
			}
			return
		}
		for _, k := range c.Children {
			walk(k, append(path[:len(path):len(path)], k.Name))
		}
	}
	walk(n, nil)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Bytes > out[j].Bytes })
	return out
}

type leaf struct {
	Path         string
	Count, Bytes int64
}

// Treemap geometry, in SVG user units.
const (
	mapWidth   = 1200.0
	mapHeight  = 640.0
	headerPx   = 17.0
	padPx      = 2.0
	lumpShare  = 0.0004 // items smaller than this share of the whole are lumped
	maxDepth   = 3
	tableLimit = 400
)

type treemap struct {
	Name        string
	Width       float64
	Height      float64
	Cells       []cell
	Rows        []censusRow
	MoreRows    int
	MoreBytes   string
	Count       string
	Bytes       string
	Empty       bool
	Diff        bool
	BeforeBytes string
	AfterBytes  string
	Delta       string
	Grew        bool // the whole census grew
}

type cell struct {
	X, Y, W, H  float64
	Fill        string
	Label, Sub  string // a leaf's name, and its bytes and count, when they fit
	Tip         string
	Group       bool
	Name        string // data-name: the full key, for tests and the tooltip
	LabelY      float64
	SubY        float64
	HeaderLabel string
}

type censusRow struct {
	Path          string
	Count, Bytes  string
	Share         float64
	Before, After string // diffs
	DCount        string
	Grew          bool
}

// buildTreemap lays root out; hue, if set, colours every top-level item
// in its shades (a zoomed-in group keeps its colour).
func buildTreemap(name string, root *CensusNode, hue ...string) treemap {
	tm := treemap{Name: name, Width: mapWidth, Height: mapHeight,
		Count: thousands(root.Count), Bytes: byteSize(root.Bytes)}
	if root.Bytes <= 0 {
		tm.Empty = true
		tm.Height = 0
	} else {
		layoutNode(&tm, root, rect{0, 0, mapWidth, mapHeight}, 0, float64(root.Bytes), strings.Join(hue, ""))
	}
	leaves := root.leaves()
	for i, l := range leaves {
		if i == tableLimit {
			var rest int64
			for _, r := range leaves[i:] {
				rest += r.Bytes
			}
			tm.MoreRows, tm.MoreBytes = len(leaves)-i, byteSize(rest)
			break
		}
		share := 0.0
		if root.Bytes > 0 {
			share = 100 * float64(l.Bytes) / float64(root.Bytes)
		}
		tm.Rows = append(tm.Rows, censusRow{Path: l.Path, Count: thousands(l.Count), Bytes: byteSize(l.Bytes), Share: share})
	}
	return tm
}

type rect struct{ x, y, w, h float64 }

// layoutNode draws n's children inside r: a group (a header and its own
// children) for a child with children, a cell for a leaf. Children that
// are too small are lumped into one "N more" cell.
func layoutNode(tm *treemap, n *CensusNode, r rect, depth int, total float64, hue string) {
	kids := make([]*CensusNode, 0, len(n.Children))
	for _, c := range n.Children {
		if c.Bytes > 0 {
			kids = append(kids, c)
		}
	}
	sort.SliceStable(kids, func(i, j int) bool { return kids[i].Bytes > kids[j].Bytes })
	// Lump the small ones.
	cut := len(kids)
	for cut > 1 && float64(kids[cut-1].Bytes) < total*lumpShare {
		cut--
	}
	items := kids[:cut]
	if cut < len(kids) {
		lump := &CensusNode{Name: fmt.Sprintf("%d more", len(kids)-cut)}
		for _, k := range kids[cut:] {
			lump.Count += k.Count
			lump.Bytes += k.Bytes
		}
		items = append(items[:cut:cut], lump)
	}
	sizes := make([]float64, len(items))
	for i, k := range items {
		sizes[i] = float64(k.Bytes)
	}
	for i, rc := range squarify(sizes, r) {
		k := items[i]
		h := hue
		if depth == 0 && hue == "" {
			h = groupHue(k.Name, i)
		}
		tip := fmt.Sprintf("%s: %s, %s items", k.Name, byteSize(k.Bytes), thousands(k.Count))
		if len(k.Children) > 0 && depth+1 < maxDepth && rc.w > 30 && rc.h > headerPx+12 {
			tm.Cells = append(tm.Cells, cell{X: rc.x, Y: rc.y, W: rc.w, H: rc.h, Group: true, Name: k.Name,
				Fill: fmt.Sprintf("hsl(%s,35%%,%d%%)", h, 88-6*depth), Tip: tip,
				HeaderLabel: fit(fmt.Sprintf("%s  %s", k.Name, byteSize(k.Bytes)), rc.w-6), LabelY: rc.y + 12.5})
			inner := rect{rc.x + padPx, rc.y + headerPx, rc.w - 2*padPx, rc.h - headerPx - padPx}
			layoutNode(tm, k, inner, depth+1, total, h)
			continue
		}
		c := cell{X: rc.x, Y: rc.y, W: rc.w, H: rc.h, Name: k.Name, Tip: tip,
			Fill: fmt.Sprintf("hsl(%s,%d%%,%d%%)", h, 45+(i*7)%20, 70-(i*5)%14)}
		if rc.h >= 14 {
			c.Label = fit(k.Name, rc.w-6)
			c.LabelY = rc.y + 13
		}
		if rc.h >= 28 && c.Label != "" {
			c.Sub = fit(fmt.Sprintf("%s · %s", byteSize(k.Bytes), thousands(k.Count)), rc.w-6)
			c.SubY = rc.y + 26
		}
		tm.Cells = append(tm.Cells, c)
	}
}

// groupHue gives SpiderMonkey's coarse types fixed hues, anything else one
// from its place.
func groupHue(name string, i int) string {
	switch name {
	case "objects":
		return "212"
	case "scripts":
		return "275"
	case "strings":
		return "140"
	case "other":
		return "32"
	}
	return strconv.Itoa((212 + i*67) % 360)
}

// squarify is the squarified treemap layout (Bruls, Huizing, van Wijk):
// sizes, largest first, as rectangles filling r, close to square.
func squarify(sizes []float64, r rect) []rect {
	out := make([]rect, len(sizes))
	var sum float64
	for _, s := range sizes {
		sum += s
	}
	if sum <= 0 || r.w <= 0 || r.h <= 0 {
		return out
	}
	scale := r.w * r.h / sum
	area := make([]float64, len(sizes))
	for i, s := range sizes {
		area[i] = s * scale
	}
	worst := func(row []float64, side float64) float64 {
		var s, mx float64
		mn := math.Inf(1)
		for _, a := range row {
			s += a
			mx = max(mx, a)
			mn = min(mn, a)
		}
		if s == 0 || mn == 0 {
			return math.Inf(1)
		}
		return max(side*side*mx/(s*s), s*s/(side*side*mn))
	}
	i := 0
	for i < len(area) {
		side := min(r.w, r.h)
		j := i + 1
		for j < len(area) && worst(area[i:j+1], side) <= worst(area[i:j], side) {
			j++
		}
		var s float64
		for _, a := range area[i:j] {
			s += a
		}
		if r.w >= r.h { // a column on the left
			cw := s / r.h
			y := r.y
			for k := i; k < j; k++ {
				hh := area[k] / cw
				out[k] = rect{r.x, y, cw, hh}
				y += hh
			}
			r.x += cw
			r.w -= cw
		} else { // a row on top
			rh := s / r.w
			x := r.x
			for k := i; k < j; k++ {
				ww := area[k] / rh
				out[k] = rect{x, r.y, ww, rh}
				x += ww
			}
			r.y += rh
			r.h -= rh
		}
		i = j
	}
	return out
}

// buildDiff compares two censuses leaf by leaf: a treemap of what grew
// (by bytes), and a table of every change, the biggest first.
func buildDiff(name string, before, after *CensusNode) treemap {
	type change struct {
		path           string
		b, a           leaf
		dBytes, dCount int64
	}
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
	grew := &CensusNode{Name: "grew"}
	groups := map[string]*CensusNode{}
	for _, c := range order {
		c.dBytes, c.dCount = c.a.Bytes-c.b.Bytes, c.a.Count-c.b.Count
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
	tm := buildTreemap(name, grew)
	tm.Diff = true
	tm.BeforeBytes, tm.AfterBytes = byteSize(before.Bytes), byteSize(after.Bytes)
	tm.Delta = signedBytes(after.Bytes - before.Bytes)
	tm.Grew = after.Bytes > before.Bytes
	sort.SliceStable(order, func(i, j int) bool {
		ai, aj := abs64(order[i].dBytes), abs64(order[j].dBytes)
		if ai != aj {
			return ai > aj
		}
		return abs64(order[i].dCount) > abs64(order[j].dCount)
	})
	tm.Rows, tm.MoreRows, tm.MoreBytes = nil, 0, ""
	for i, c := range order {
		if c.dBytes == 0 && c.dCount == 0 {
			continue
		}
		if len(tm.Rows) == tableLimit {
			tm.MoreRows = len(order) - i
			break
		}
		tm.Rows = append(tm.Rows, censusRow{Path: c.path,
			Before: fmt.Sprintf("%s · %s", byteSize(c.b.Bytes), thousands(c.b.Count)),
			After:  fmt.Sprintf("%s · %s", byteSize(c.a.Bytes), thousands(c.a.Count)),
			Bytes:  signedBytes(c.dBytes), DCount: signed(c.dCount), Grew: c.dBytes > 0 || (c.dBytes == 0 && c.dCount > 0)})
	}
	return tm
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// byteSize formats bytes for people.
func byteSize(b int64) string {
	a := abs64(b)
	switch {
	case a >= 10<<20:
		return fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
	case a >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	case a >= 10<<10:
		return fmt.Sprintf("%.0f kB", float64(b)/(1<<10))
	case a >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func signedBytes(b int64) string {
	if b > 0 {
		return "+" + byteSize(b)
	}
	return byteSize(b)
}

func signed(n int64) string {
	if n > 0 {
		return "+" + thousands(n)
	}
	return thousands(n)
}

// thousands writes n with thin spaces between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(abs64(n), 10)
	var b strings.Builder
	if n < 0 {
		b.WriteString("−")
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(",")
		}
		b.WriteRune(c)
	}
	return b.String()
}
