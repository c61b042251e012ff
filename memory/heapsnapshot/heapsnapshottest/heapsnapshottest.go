package heapsnapshottest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Options says what to generate.
type Options struct {
	// Objects is the number of JavaScript objects. Each comes with a
	// backing store ("array"), a string and a heap number, and 9 edges, like
	// a small object on a real page: 100,000 objects make about 22 MB
	// (400,000 nodes, 900,000 edges; a real page with 100,000 small objects
	// gave 25.5 MB, 426,000 nodes, 1.0 M edges).
	Objects int
	// Classes are the objects' constructor names, used in turn; the
	// default is Object, Foo, Bar, Array.
	Classes []string
	// Traces adds a trace_node_id field and an allocation trace tree:
	// objects of class c are allocated in make<c> called from main, their
	// strings in main; every tenth object has no trace.
	Traces bool
}

var nodeTypes = []string{"hidden", "array", "string", "object", "code", "closure", "regexp",
	"number", "native", "synthetic", "concatenated string", "sliced string", "symbol", "bigint", "object shape"}

const (
	tArray, tString, tObject, tCode, tClosure, tNumber, tSynthetic, tShape = 1, 2, 3, 4, 5, 7, 9, 14
	eElement, eProperty, eInternal, eHidden, eShortcut                     = 1, 2, 3, 4, 5
)

// Write writes a snapshot to w.
func Write(w io.Writer, o Options) error {
	g := newGen(w, o)
	g.header()
	g.nodes()
	g.edges()
	infos, tree := g.traceTree()
	g.w.WriteString("],\n\"trace_function_infos\":[" + infos + "],\n\"trace_tree\":[" + tree + "],\n")
	g.locations()
	g.strings()
	return g.w.Flush()
}

// gen writes one snapshot.
type gen struct {
	w       *bufio.Writer
	o       Options
	classes []string
	nc      int // len(classes)
	base    int // the first object's ordinal
	nf      int // node fields
	nextID  uint32
	sep     byte // 0 before the first record of an array, then ','
	buf     []byte

	// The string table; "item-k" strings follow the fixed ones, the
	// classes and their make<c>.
	strs              []string
	sid               map[string]int
	classStr, itemStr int
}

func newGen(w io.Writer, o Options) *gen {
	classes := o.Classes
	if len(classes) == 0 {
		classes = []string{"Object", "Foo", "Bar", "Array"}
	}
	g := &gen{w: bufio.NewWriterSize(w, 64<<10), o: o, classes: classes, nc: len(classes), nf: 6}
	if o.Traces {
		g.nf = 7
	}
	g.base = 3 + 3*g.nc
	g.strs = []string{"<dummy>", "", "(GC roots)", "Window", "system / Map", "heap number", "map", "label",
		"value", "properties", "next", "shared", "initial_map", "first", "(root)", "main", "app.js"}
	g.sid = map[string]int{}
	for i, s := range g.strs {
		g.sid[s] = i
	}
	g.classStr = len(g.strs)
	g.strs = append(g.strs, classes...)
	for _, c := range classes {
		g.strs = append(g.strs, "make"+c)
	}
	g.itemStr = len(g.strs)
	return g
}

// header writes the "snapshot" header and opens "nodes".
func (g *gen) header() {
	nodeCount := g.base + 4*g.o.Objects
	edgeCount := 2 + g.nc + 1 + 2*g.nc + 9*g.o.Objects
	traceFields := `"trace_function_info_fields":["function_id","name","script_name","script_id","line","column"],` +
		`"trace_node_fields":["id","function_info_index","count","size","children"],`
	nodeFields := `"type","name","id","self_size","edge_count","detachedness"`
	traceFunctions := 0
	if g.o.Traces {
		nodeFields = `"type","name","id","self_size","edge_count","trace_node_id","detachedness"`
		traceFunctions = g.nc + 2
	}
	types, _ := json.Marshal(nodeTypes)
	fmt.Fprintf(g.w, `{"snapshot":{"meta":{"node_fields":[%s],"node_types":[%s,"string","number","number","number","number","number"],`+
		`"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"],`+
		`%s"sample_fields":["timestamp_us","last_assigned_id"],"location_fields":["object_index","script_id","line","column"]},`+
		`"node_count":%d,"edge_count":%d,"trace_function_count":%d},`+"\n"+`"nodes":[`,
		nodeFields, types, traceFields, nodeCount, edgeCount, traceFunctions)
}

// nodes writes the nodes. Ids are odd and increasing, as V8's are for
// heap objects.
func (g *gen) nodes() {
	sid := g.sid
	g.node(tSynthetic, sid[""], 0, 2, 0)
	g.node(tSynthetic, sid["(GC roots)"], 0, g.nc, 0)
	g.node(tObject, sid["Window"], 64, 1, 0)
	for c := range g.classes {
		g.node(tShape, sid["system / Map"], 40, 0, 0)
		g.node(tClosure, g.classStr+c, 32, 2, 0)
		g.node(tCode, g.classStr+c, 56, 0, 0)
	}
	for k := range g.o.Objects {
		c := k % g.nc
		trace := uint32(3 + c)
		if k%10 == 9 {
			trace = 0
		}
		g.node(tObject, g.classStr+c, int64(16+8*(k%4)), 5, trace)
		g.node(tArray, sid[""], 32, 2, 0)
		g.node(tString, g.itemStr+k, int64(20+len(strconv.Itoa(k))), 1, 2)
		g.node(tNumber, sid["heap number"], 12, 1, 0)
	}
}

// edges writes the edges, in node order.
func (g *gen) edges() {
	sid, base := g.sid, g.base
	g.sep = 0
	g.w.WriteString("],\n\"edges\":[")
	g.edge(eElement, 1, 1)
	g.edge(eShortcut, sid["Window"], 2)
	for c := range g.classes {
		g.edge(eElement, c, 3+3*c+1)
	}
	if g.o.Objects > 0 {
		g.edge(eProperty, sid["first"], base)
	} else {
		g.edge(eProperty, sid["first"], 2)
	}
	for c := range g.classes {
		g.edge(eInternal, sid["initial_map"], 3+3*c)
		g.edge(eInternal, sid["shared"], 3+3*c+2)
	}
	for k := range g.o.Objects {
		a := base + 4*k
		g.edge(eInternal, sid["map"], 3+3*(k%g.nc))
		g.edge(eInternal, sid["properties"], a+1)
		g.edge(eProperty, sid["label"], a+2)
		g.edge(eProperty, sid["value"], a+3)
		g.edge(eProperty, sid["next"], base+4*((k+1)%g.o.Objects))
		g.edge(eHidden, 0, a+2)
		g.edge(eHidden, 1, a+3)
		g.edge(eInternal, sid["map"], 3) // strings and numbers share a map here
		g.edge(eInternal, sid["map"], 3)
	}
}

// traceTree returns the allocation trace arrays' contents, empty without
// Traces. Function infos: (root), main, make<c>...; trace node ids: 1
// root, 2 main, 3+c make<c> under main.
func (g *gen) traceTree() (infos, tree string) {
	if !g.o.Traces {
		return "", ""
	}
	sid := g.sid
	infos = fmt.Sprintf("0,%d,%d,0,0,0,\n1,%d,%d,7,1,1", sid["(root)"], sid[""], sid["main"], sid["app.js"])
	tree = "1,0,0,0,[2,1,0,0,["
	for c := range g.classes {
		infos += fmt.Sprintf(",\n%d,%d,%d,7,%d,3", c+2, g.classStr+g.nc+c, sid["app.js"], 10+c)
		if c > 0 {
			tree += ","
		}
		tree += fmt.Sprintf("%d,%d,0,0,[]", 3+c, c+2)
	}
	return infos, tree + "]]"
}

// locations writes empty "samples" and the objects' "locations": V8
// locates objects by their constructor's source position.
func (g *gen) locations() {
	g.w.WriteString("\"samples\":[],\n\"locations\":[")
	g.sep = 0
	for k := range g.o.Objects {
		b := g.start()
		b = strconv.AppendInt(b, int64((g.base+4*k)*g.nf), 10)
		b = append(b, ",7,"...)
		b = strconv.AppendInt(b, int64(10+k%g.nc), 10)
		b = append(b, ",3\n"...)
		g.buf = b
		g.w.Write(b)
	}
}

// strings writes the string table and closes the snapshot.
func (g *gen) strings() {
	g.w.WriteString("],\n\"strings\":[")
	for i, s := range g.strs {
		if i > 0 {
			g.w.WriteString(",\n")
		}
		b, _ := json.Marshal(s)
		g.w.Write(b)
	}
	for k := range g.o.Objects {
		g.w.WriteString(",\n\"item-")
		g.w.WriteString(strconv.Itoa(k))
		g.w.WriteByte('"')
	}
	g.w.WriteString("]}\n")
}

func (g *gen) node(typ, name int, size int64, edges int, trace uint32) {
	g.nextID += 2
	b := g.start()
	b = strconv.AppendInt(b, int64(typ), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(name), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(g.nextID-1), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, size, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(edges), 10)
	if g.nf == 7 {
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(trace), 10)
	}
	b = append(b, ",0\n"...)
	g.buf = b
	g.w.Write(b)
}

func (g *gen) edge(typ, nameOrIndex, to int) {
	b := g.start()
	b = strconv.AppendInt(b, int64(typ), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(nameOrIndex), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(to*g.nf), 10)
	b = append(b, '\n')
	g.buf = b
	g.w.Write(b)
}

func (g *gen) start() []byte {
	b := g.buf[:0]
	if g.sep != 0 {
		b = append(b, g.sep)
	}
	g.sep = ','
	return b
}
