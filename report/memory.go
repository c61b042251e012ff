package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/wdext/wdext/wire"
)

// NamedLeaks is one leak verdict of a file; Name says whose in a
// "targets": "all" check ("iframe https://…"), and is "" otherwise.
type NamedLeaks struct {
	Name   string
	Report wire.LeakReport
}

// ParseLeaks reads a leak verdict: `wdext leaks --json`'s output or the
// leaks/stop command's answer (bare, or wrapped in {"value": …}); for a
// check of "targets": "all", one verdict per target that has one.
func ParseLeaks(data []byte) ([]NamedLeaks, error) {
	data = unwrapValue(data)
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("not a leak report: %w", jsonError(data, err))
	}
	if _, ok := probe["targets"]; ok {
		var all wire.AllLeaks
		if err := json.Unmarshal(data, &all); err != nil {
			return nil, fmt.Errorf("not a leak report: %w", jsonError(data, err))
		}
		var out []NamedLeaks
		for _, t := range all.Targets {
			if t.Report != nil {
				out = append(out, NamedLeaks{Name: strings.TrimSpace(t.Type + " " + t.URL), Report: *t.Report})
			}
		}
		if len(out) == 0 {
			return nil, errors.New("not a leak report: no target has a verdict")
		}
		return out, nil
	}
	if _, ok := probe["leaks"]; !ok {
		return nil, errors.New(`not a leak report: no "leaks" or "targets" (wdext leaks --json, or leaks/stop's value)`)
	}
	var r wire.LeakReport
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not a leak report: %w", jsonError(data, err))
	}
	return []NamedLeaks{{Report: r}}, nil
}

type leaksView struct {
	Name                   string
	Iterations             int
	Before, After, Growth  string
	Groups                 []leakGroup
	TotalCount, TotalBytes string
	HeapGrew               bool
	KindsLegend            []legendItem
}

type leakGroup struct {
	Kind, Name          string
	Fill                string
	Count, PerIteration string
	Bytes               string
	Path                []pathStep
	NoPath              bool
	Created             string
	CreatedAt           string
}

// pathStep is one node of a retainer path and the edge that leads from it
// to the next node.
type pathStep struct {
	Node, Edge string
	Root, Leak bool
}

var kindHue = map[string]string{
	wire.LeakObjects:        "hsl(8,70%,60%)",
	wire.LeakDetachedDOM:    "hsl(280,45%,62%)",
	wire.LeakCollection:     "hsl(35,80%,55%)",
	wire.LeakEventListeners: "hsl(200,60%,55%)",
	wire.LeakTimers:         "hsl(140,45%,50%)",
}

func buildLeaks(name string, r wire.LeakReport) leaksView {
	v := leaksView{Name: name, Iterations: r.Iterations, Before: ByteSize(r.BytesBefore), After: ByteSize(r.BytesAfter),
		Growth: signedBytes(r.BytesAfter - r.BytesBefore), HeapGrew: r.BytesAfter > r.BytesBefore}
	var count, bytes int64
	for _, l := range r.Leaks {
		count += l.CountDelta
		bytes += l.BytesDelta
		g := leakGroup{Kind: l.Kind, Name: l.Name, Fill: kindHue[l.Kind], Count: signed(l.CountDelta),
			PerIteration: thousands(l.PerIteration)}
		if g.Fill == "" {
			g.Fill = "hsl(0,0%,60%)"
		}
		if l.BytesDelta != 0 {
			g.Bytes = signedBytes(l.BytesDelta)
		}
		// The path alternates nodes and edges: node, edge, node, …, node.
		for i := 0; i < len(l.RetainerPath); i += 2 {
			st := pathStep{Node: l.RetainerPath[i], Root: i == 0}
			if i+1 < len(l.RetainerPath) {
				st.Edge = l.RetainerPath[i+1]
			}
			g.Path = append(g.Path, st)
		}
		if n := len(g.Path); n > 0 {
			g.Path[n-1].Leak = true
		}
		g.NoPath = len(g.Path) == 0
		if f := l.CreatedFrom; f != nil {
			g.Created = orAnon(f.FunctionName)
			g.CreatedAt = f.URL
			if f.Line > 0 {
				g.CreatedAt += fmt.Sprintf(":%d:%d", f.Line, f.Column)
			}
		}
		v.Groups = append(v.Groups, g)
	}
	v.TotalCount, v.TotalBytes = thousands(count), ByteSize(bytes)
	kinds := []string{wire.LeakObjects, wire.LeakDetachedDOM, wire.LeakCollection, wire.LeakEventListeners, wire.LeakTimers}
	for _, k := range kinds {
		v.KindsLegend = append(v.KindsLegend, legendItem{Fill: kindHue[k], Label: k})
	}
	return v
}

// measurement is a Measure Memory result (the page's
// performance.measureUserAgentSpecificMemory() or wdext's measure
// command): its total and one bar per breakdown entry.
type measurement struct {
	Bytes     int64 `json:"bytes"`
	Breakdown []struct {
		Bytes       int64 `json:"bytes"`
		Attribution []struct {
			URL       string `json:"url"`
			Scope     string `json:"scope"`
			Container *struct {
				ID  string `json:"id"`
				Src string `json:"src"`
			} `json:"container"`
		} `json:"attribution"`
		Types   []string `json:"types"`
		UATypes []string `json:"userAgentSpecificTypes"`
	} `json:"breakdown"`
}

type measureView struct {
	Name  string
	Total string
	Bars  []measureBar
}

type measureBar struct {
	Label, Scope, Types, Bytes string
	Pct                        float64
}

// parseMeasurement reads a MemoryMeasurement.
func parseMeasurement(data []byte) (measurement, error) {
	data = unwrapValue(data)
	var m measurement
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("not a MemoryMeasurement: %w", jsonError(data, err))
	}
	if m.Breakdown == nil {
		return m, errors.New(`not a MemoryMeasurement: no "breakdown"`)
	}
	return m, nil
}

func buildMeasure(name string, m measurement) measureView {
	v := measureView{Name: name, Total: ByteSize(m.Bytes)}
	var most int64 = 1
	for _, b := range m.Breakdown {
		most = max(most, b.Bytes)
	}
	for _, b := range m.Breakdown {
		var urls, scopes []string
		for _, a := range b.Attribution {
			u := a.URL
			if a.Container != nil && a.Container.ID != "" {
				u += " (iframe #" + a.Container.ID + ")"
			}
			urls = append(urls, u)
			scopes = append(scopes, a.Scope)
		}
		label := strings.Join(urls, ", ")
		if label == "" {
			label = "(not attributed to a frame or worker)"
		}
		types := append(append([]string(nil), b.Types...), b.UATypes...)
		v.Bars = append(v.Bars, measureBar{Label: label, Scope: strings.Join(scopes, ", "), Types: strings.Join(types, ", "),
			Bytes: ByteSize(b.Bytes), Pct: 100 * float64(b.Bytes) / float64(most)})
	}
	sort.SliceStable(v.Bars, func(i, j int) bool { return v.Bars[i].Pct > v.Bars[j].Pct })
	return v
}
