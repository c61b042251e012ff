package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
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
