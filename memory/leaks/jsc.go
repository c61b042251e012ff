package leaks

import (
	"fmt"
	"math"
	"strings"

	"github.com/wdext/wdext/memory/heapsnapshot"
	"github.com/wdext/wdext/memory/jscsnapshot"
)

// DOMNode is what an engine found out about the DOM node a
// JavaScriptCore snapshot node wraps, which the snapshot does not say.
type DOMNode struct {
	// Detached tells a node no document holds (not isConnected).
	Detached bool
	// Selector names it: "div#a.b" for <div id="a" class="b">.
	Selector string
}

// Entries are the sizes of collections, by heap object id, that an engine
// measured because its snapshots do not show their entries (JSC shows
// no edges from a Map or Set to its keys and values).
type Entries map[uint32]int

// FromJSC translates a JavaScriptCore heap snapshot (read with its edges,
// jscsnapshot.ReadGraph) into V8's vocabulary, so that the leak check
// works on it as on V8's:
//
//   - the <root> is V8's synthetic root; strings and BigInts are V8's
//     "string" and "bigint" nodes; cells JSC flags Internal are "object
//     shape" (Structures), "code" (executables, code blocks) or "hidden"
//     (the rest), none of which a path from the page goes through;
//   - functions are "closure" nodes named after their class ("Function",
//     "AsyncFunction"); scopes (JSC's …Environment and …Scope classes)
//     are V8's "system / Context"; other objects are "object" nodes named
//     after their class, as V8 names them after their constructor;
//   - the wrapper of a DOM node dom knows is attached (detachedness 1)
//     or detached (2, and named "HTMLDivElement div.dialog" after its
//     class and selector);
//   - prototype objects (a function's prototype, Symbol.unscopables) are
//     objects named "(prototype)", which no group counts (see prototypes);
//   - Property, Index, Variable and Internal edges are V8's "property",
//     "element", "context" and "internal" edges; a Map's or Set's
//     internal edge to its storage is named "table", and an internal
//     edge to a scope "context", as in V8.
//
// JSC keeps no allocation stacks, so the result has no trace node ids.
func FromJSC(js *jscsnapshot.Snapshot, dom map[uint64]DOMNode) (*heapsnapshot.Snapshot, error) {
	if !js.HasEdges() {
		return nil, fmt.Errorf("leaks: the JavaScriptCore snapshot was read without its edges")
	}
	protos := prototypes(js)
	var b heapsnapshot.Builder
	for i := range js.NodeCount() {
		id := js.ID(i)
		if id > math.MaxUint32 {
			return nil, fmt.Errorf("leaks: JavaScriptCore cell id %d does not fit the 32 bits of V8's heap object ids", id)
		}
		typ, name, det := jscNode(js, i, dom)
		if protos[i] && typ == "object" {
			name = "(prototype)" // not grouped, not a collection (objectClass)
		}
		if _, err := b.Node(typ, name, uint32(id), js.SelfSize(i), det); err != nil {
			return nil, err
		}
	}
	for i := range js.NodeCount() {
		class := js.ClassName(i)
		for e := range js.Edges(i) {
			var err error
			switch e.Type {
			case "Property":
				err = b.Edge(i, "property", e.Name, -1, e.To)
			case "Index":
				err = b.Edge(i, "element", "", e.Index, e.To)
			case "Variable":
				err = b.Edge(i, "context", e.Name, -1, e.To)
			default:
				name := ""
				switch to := js.ClassName(e.To); {
				case (class == "Map" || class == "Set") && to != "Structure":
					name = "table"
				case isScope(to):
					name = "context" // as V8 names a closure's scope
				}
				err = b.Edge(i, "internal", name, -1, e.To)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return b.Snapshot(), nil
}

// isScope tells JSC's scope classes (JSLexicalEnvironment,
// JSGlobalLexicalEnvironment, …Scope), V8's contexts.
func isScope(class string) bool {
	return strings.HasSuffix(class, "Environment") || strings.HasSuffix(class, "Scope")
}

// prototypes are the nodes that are a function's prototype object or a
// Symbol.unscopables object. JavaScriptCore makes those of its built-in
// constructors and DOM interfaces on first use (measured on WebKitGTK
// 2.50.6: TypeError's and Date's, and Element.prototype's unscopables,
// made between the snapshots by the first exception and the first date
// of the scenario), which is no leak; and a prototype is no object a
// scenario leaks (its instances and functions are).
func prototypes(js *jscsnapshot.Snapshot) map[int]bool {
	out := map[int]bool{}
	for i := range js.NodeCount() {
		fn := strings.HasSuffix(js.ClassName(i), "Function")
		for e := range js.Edges(i) {
			if e.Type == "Property" && (fn && e.Name == "prototype" || e.Name == "Symbol.unscopables") {
				out[e.To] = true
			}
		}
	}
	return out
}

// jscNode is node i's V8 type, name and detachedness.
func jscNode(js *jscsnapshot.Snapshot, i int, dom map[uint64]DOMNode) (typ, name string, detachedness uint8) {
	class := js.ClassName(i)
	switch {
	case i == 0:
		return "synthetic", "(GC roots)", 0
	case js.IsInternal(i):
		switch {
		case class == "Structure":
			return "object shape", class, 0
		case strings.Contains(class, "Executable") || strings.Contains(class, "CodeBlock"):
			return "code", class, 0
		}
		return "hidden", class, 0
	case class == "string":
		return "string", "", 0
	case class == "BigInt" && !js.IsObject(i):
		return "bigint", "", 0
	case !js.IsObject(i):
		return "hidden", class, 0
	case strings.HasSuffix(class, "Function"):
		return "closure", class, 0
	case isScope(class):
		return "object", "system / Context", 0
	}
	if n, ok := dom[js.ID(i)]; ok {
		if n.Detached {
			return "object", strings.TrimSpace(class + " " + n.Selector), detachedNode
		}
		return "object", class, 1
	}
	return "object", class, 0
}
