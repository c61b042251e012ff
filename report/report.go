package report

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strconv"
)

//go:embed assets/page.html assets/report.css assets/report.js
var assets embed.FS

var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"f0": func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) },
	"f1": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"f2": func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	// css passes a colour the report made (hsl(…)) into a style attribute.
	"css": func(colour string) template.CSS { return template.CSS(colour) },
}).ParseFS(assets, "assets/page.html"))

var (
	css = mustRead("assets/report.css")
	js  = mustRead("assets/report.js")
)

func mustRead(name string) string {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return string(b)
}

// Page is one self-contained HTML report: a title and its sections, each
// drawn by the Add methods, written by Write. The zero Page is ready.
type Page struct {
	Title    string
	Subtitle string
	sections []section
	wpt      *wptView
}

// section is one drawing; exactly one field is set.
type section struct {
	Flame   *flame
	Treemap *treemap
	Leaks   *leaksView
	Measure *measureView
	Raw     *rawView
}

type rawView struct {
	Name, Error, JSON string
}

// AddTraces draws each trace as a flame chart, one under the other.
func (p *Page) AddTraces(traces ...TraceInput) {
	for _, t := range traces {
		f := buildFlame(t)
		p.sections = append(p.sections, section{Flame: &f})
	}
}

// AddCensus draws each census as a treemap with a table of its items,
// and its objects by class in a treemap of their own when they are less
// than half of it.
func (p *Page) AddCensus(name string, cs ...NamedCensus) {
	for _, c := range cs {
		n := name
		if c.Name != "" {
			n = joinName(name, c.Name)
		}
		tm := buildTreemap(n, c.Root)
		p.sections = append(p.sections, section{Treemap: &tm})
		// When objects are a small part of the heap (native and code
		// dominate real pages), their classes, what a developer looks
		// for, get a treemap of their own.
		for _, k := range c.Root.Children {
			if k.Name == "objects" && len(k.Children) > 1 && k.Bytes*2 < c.Root.Bytes {
				zoom := buildTreemap(joinName(n, "objects by class"), k, groupHue("objects", 0))
				p.sections = append(p.sections, section{Treemap: &zoom})
			}
		}
	}
}

// AddCensusDiff draws what grew from before to after (a treemap of the
// growth) and a table of every change.
func (p *Page) AddCensusDiff(name string, before, after *CensusNode) {
	tm := buildDiff(name, before, after)
	p.sections = append(p.sections, section{Treemap: &tm})
}

// AddLeaks draws leak verdicts: each group with its count, its retainer
// path as a chain from the root, and its creating frame.
func (p *Page) AddLeaks(name string, rs ...NamedLeaks) {
	for _, r := range rs {
		v := buildLeaks(joinName(name, r.Name), r.Report)
		p.sections = append(p.sections, section{Leaks: &v})
	}
}

// Write writes the page: one HTML document with its CSS and script
// inline, which loads nothing (its Content-Security-Policy forbids it) and
// works from file://.
func (p *Page) Write(w io.Writer) error {
	title := p.Title
	if title == "" {
		title = "wdext report"
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	err := page.Execute(bw, struct {
		Title, Subtitle string
		CSS             template.CSS
		JS              template.JS
		Sections        []section
		WPT             *wptView
	}{title, p.Subtitle, template.CSS(css), template.JS(js), p.sections, p.wpt})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func joinName(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ": " + b
}

// unwrapValue returns v of a WebDriver answer {"value": v}, else data.
func unwrapValue(data []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) == nil && len(m) == 1 {
		if v, ok := m["value"]; ok {
			return v
		}
	}
	return data
}

// jsonError adds the line and column to a JSON syntax error.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("line %d: %w", line, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: %s where %s belongs", te.Field, te.Value, te.Type)
	}
	return err
}
