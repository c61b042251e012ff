package heapsnapshottest

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Graph builds a small snapshot node by node, edge by edge, for tests of
// algorithms over the heap graph (retainer paths, leak groups). Node 0,
// V8's synthetic root, is the first node added. The zero Graph is empty
// and ready to use.
type Graph struct {
	nodes  []gnode
	traces []gtrace
}

type gnode struct {
	typ, name    string
	id           uint32
	size         int64
	trace        uint32
	detachedness uint8
	edges        []gedge
}

type gedge struct {
	typ, name string
	index     int
	to        int
}

type gtrace struct {
	id, parent   uint32
	fn, script   string
	line, column int
}

// Node adds a node of V8 type typ ("object", "native", "synthetic",
// "array", "closure", ...) and returns its ordinal.
func (g *Graph) Node(typ, name string, id uint32, size int64) int {
	g.nodes = append(g.nodes, gnode{typ: typ, name: name, id: id, size: size})
	return len(g.nodes) - 1
}

// Detach sets node n's detachedness (2: detached).
func (g *Graph) Detach(n int, detachedness uint8) { g.nodes[n].detachedness = detachedness }

// Allocated sets node n's allocation trace node id.
func (g *Graph) Allocated(n int, trace uint32) { g.nodes[n].trace = trace }

// Edge adds an edge with a name ("property", "internal", "context",
// "shortcut", "weak") from node from to node to.
func (g *Graph) Edge(from int, typ, name string, to int) {
	g.nodes[from].edges = append(g.nodes[from].edges, gedge{typ: typ, name: name, index: -1, to: to})
}

// Element adds an edge with an index ("element", "hidden").
func (g *Graph) Element(from int, typ string, index, to int) {
	g.nodes[from].edges = append(g.nodes[from].edges, gedge{typ: typ, index: index, to: to})
}

// Trace adds an allocation trace node: id, under trace node parent (0 for
// a top-level one), in function fn of script at line and column.
func (g *Graph) Trace(id, parent uint32, fn, script string, line, column int) {
	g.traces = append(g.traces, gtrace{id, parent, fn, script, line, column})
}

var edgeTypes = []string{"context", "element", "property", "internal", "hidden", "shortcut", "weak"}

// WriteTo writes the graph as a V8 heap snapshot with trace_node_id and
// detachedness fields.
func (g *Graph) WriteTo(w io.Writer) (int64, error) {
	gw := &graphWriter{sid: map[string]int{}}
	gw.header(g)
	if err := gw.nodes(g); err != nil {
		return 0, err
	}
	if err := gw.edges(g); err != nil {
		return 0, err
	}
	b := &gw.b
	b.WriteString("],\n\"trace_function_infos\":[")
	for i, t := range g.traces {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%d,%d,%d,%d,%d,%d\n", i, gw.str(t.fn), gw.str(t.script), 1, t.line, t.column)
	}
	b.WriteString("],\n\"trace_tree\":[")
	g.writeTraces(b, 0)
	b.WriteString("],\n\"samples\":[],\n\"locations\":[],\n\"strings\":[")
	gw.strings()
	b.WriteString("]}\n")
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// graphWriter is the state of WriteTo: the snapshot so far, and its
// string table.
type graphWriter struct {
	b    strings.Builder
	strs []string
	sid  map[string]int
}

// graphNodeFields is the number of node_fields WriteTo writes.
const graphNodeFields = 7

// str returns s's index in the string table, adding it if new.
func (gw *graphWriter) str(s string) int {
	if i, ok := gw.sid[s]; ok {
		return i
	}
	gw.sid[s] = len(gw.strs)
	gw.strs = append(gw.strs, s)
	return len(gw.strs) - 1
}

// typeIndex returns the index of type s in list.
func typeIndex(list []string, s string) (int, error) {
	i := slices.Index(list, s)
	if i < 0 {
		return 0, fmt.Errorf("heapsnapshottest: unknown type %q", s)
	}
	return i, nil
}

// header writes the "snapshot" header and opens "nodes".
func (gw *graphWriter) header(g *Graph) {
	nodeCount, edgeCount := len(g.nodes), 0
	for _, n := range g.nodes {
		edgeCount += len(n.edges)
	}
	types, _ := json.Marshal(nodeTypes)
	fmt.Fprintf(&gw.b, `{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],`+
		`"node_types":[%s,"string","number","number","number","number","number"],`+
		`"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"],`+
		`"trace_function_info_fields":["function_id","name","script_name","script_id","line","column"],`+
		`"trace_node_fields":["id","function_info_index","count","size","children"]},`+
		`"node_count":%d,"edge_count":%d,"trace_function_count":%d},`+"\n"+`"nodes":[`, types, nodeCount, edgeCount, len(g.traces))
}

func (gw *graphWriter) nodes(g *Graph) error {
	for i, n := range g.nodes {
		t, err := typeIndex(nodeTypes, n.typ)
		if err != nil {
			return err
		}
		if i > 0 {
			gw.b.WriteByte(',')
		}
		fmt.Fprintf(&gw.b, "%d,%d,%d,%d,%d,%d,%d\n", t, gw.str(n.name), n.id, n.size, len(n.edges), n.trace, n.detachedness)
	}
	return nil
}

func (gw *graphWriter) edges(g *Graph) error {
	gw.b.WriteString("],\n\"edges\":[")
	first := true
	for _, n := range g.nodes {
		for _, e := range n.edges {
			t, err := typeIndex(edgeTypes, e.typ)
			if err != nil {
				return err
			}
			name := e.index
			if e.index < 0 {
				name = gw.str(e.name)
			}
			if !first {
				gw.b.WriteByte(',')
			}
			first = false
			fmt.Fprintf(&gw.b, "%d,%d,%d\n", t, name, e.to*graphNodeFields)
		}
	}
	return nil
}

// strings writes the string table's entries.
func (gw *graphWriter) strings() {
	for i, s := range gw.strs {
		if i > 0 {
			gw.b.WriteByte(',')
		}
		q, _ := json.Marshal(s)
		gw.b.Write(q)
	}
}

// writeTraces writes the trace nodes under parent, recursively.
func (g *Graph) writeTraces(b *strings.Builder, parent uint32) {
	first := true
	for i, t := range g.traces {
		if t.parent != parent {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.FormatUint(uint64(t.id), 10) + "," + strconv.Itoa(i) + ",0,0,[")
		g.writeTraces(b, t.id)
		b.WriteString("]")
	}
}
