package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

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
		Count: thousands(root.Count), Bytes: ByteSize(root.Bytes)}
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
			tm.MoreRows, tm.MoreBytes = len(leaves)-i, ByteSize(rest)
			break
		}
		share := 0.0
		if root.Bytes > 0 {
			share = 100 * float64(l.Bytes) / float64(root.Bytes)
		}
		tm.Rows = append(tm.Rows, censusRow{Path: l.Path, Count: thousands(l.Count), Bytes: ByteSize(l.Bytes), Share: share})
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
		tip := fmt.Sprintf("%s: %s, %s items", k.Name, ByteSize(k.Bytes), thousands(k.Count))
		if len(k.Children) > 0 && depth+1 < maxDepth && rc.w > 30 && rc.h > headerPx+12 {
			tm.Cells = append(tm.Cells, cell{X: rc.x, Y: rc.y, W: rc.w, H: rc.h, Group: true, Name: k.Name,
				Fill: fmt.Sprintf("hsl(%s,35%%,%d%%)", h, 88-6*depth), Tip: tip,
				HeaderLabel: fit(fmt.Sprintf("%s  %s", k.Name, ByteSize(k.Bytes)), rc.w-6), LabelY: rc.y + 12.5})
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
			c.Sub = fit(fmt.Sprintf("%s · %s", ByteSize(k.Bytes), thousands(k.Count)), rc.w-6)
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
