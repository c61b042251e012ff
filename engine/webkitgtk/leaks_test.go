package webkitgtk

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/jscsnapshot"
)

// The page is asked along paths of data properties and elements from the
// current global (the one the window proxy points to) and its global let
// and const bindings: not from an older document's global, not through
// getters or symbol-keyed properties, and not a path two frames share.
func TestGlobalPaths(t *testing.T) {
	// Cells: 0 <root>, 1 Window (current), 2 JSWindowProxy, 3 Window (a
	// previous document's), 4 Array, 5..7 and 9..10 Map, 8 GetterSetter,
	// 11 the global let/const scope with 12 a Map; a frame's proxy 13 and
	// Window 14, whose dup Map 15 has the same path as the page's 16.
	const snap = `{"version":3,"type":"Inspector",
"nodeClassNames":["<root>","Window","JSWindowProxy","Array","Map","GetterSetter","JSGlobalLexicalEnvironment"],
"nodes":[0,0,0,0, 1,32,1,0, 2,32,2,0, 3,32,1,0, 4,32,3,0, 5,32,4,0, 6,32,4,0, 7,32,4,0, 8,32,5,0, 9,32,4,0, 10,32,4,0,
 11,32,6,0, 12,32,4,0, 13,32,2,0, 14,32,1,0, 15,32,4,0, 16,32,4,0],
"edgeTypes":["Internal","Property","Index","Variable"],
"edgeNames":["cache","list","accessor","Symbol.iterator","a \"quoted\" name","lexMap","dup"],
"edges":[0,2,0,0, 0,3,0,0, 0,13,0,0, 2,1,0,0, 1,5,1,0, 1,4,1,1, 4,6,2,2, 3,7,1,0, 1,8,1,2, 8,9,0,0, 1,10,1,3, 5,10,1,4,
 1,11,0,0, 11,12,3,5, 13,14,0,0, 14,15,1,6, 1,16,1,6]}`
	js, err := jscsnapshot.ReadGraph(strings.NewReader(snap))
	assert.NilError(t, err)
	got := map[uint64]string{}
	for _, p := range globalPaths(js, func(i int) bool { return js.ClassName(i) == "Map" }) {
		got[js.ID(p.node)] = p.expr
	}
	assert.DeepEqual(t, got, map[uint64]string{
		5:  `own(globalThis, "cache")`,
		6:  `own(own(globalThis, "list"), 2)`,
		10: `own(own(globalThis, "cache"), "a \"quoted\" name")`,
		12: `lexMap`,
	})
}
