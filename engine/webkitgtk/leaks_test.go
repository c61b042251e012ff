package webkitgtk

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/memory/jscsnapshot"
)

// The page is asked along paths of data properties and elements from the
// current global (the one the window proxy points to): not from an older
// document's global, not through getters or symbol-keyed properties.
func TestGlobalPaths(t *testing.T) {
	// Cells: 0 <root>, 1 Window (current), 2 JSWindowProxy, 3 Window (a
	// previous document's), 4 Array, 5..7 and 9..10 Map, 8 GetterSetter.
	const snap = `{"version":3,"type":"Inspector",
"nodeClassNames":["<root>","Window","JSWindowProxy","Array","Map","GetterSetter"],
"nodes":[0,0,0,0, 1,32,1,0, 2,32,2,0, 3,32,1,0, 4,32,3,0, 5,32,4,0, 6,32,4,0, 7,32,4,0, 8,32,5,0, 9,32,4,0, 10,32,4,0],
"edgeTypes":["Internal","Property","Index","Variable"],
"edgeNames":["cache","list","accessor","Symbol.iterator","a \"quoted\" name"],
"edges":[0,2,0,0, 0,3,0,0, 2,1,0,0, 1,5,1,0, 1,4,1,1, 4,6,2,2, 3,7,1,0, 1,8,1,2, 8,9,0,0, 1,10,1,3, 5,10,1,4]}`
	js, err := jscsnapshot.ReadGraph(strings.NewReader(snap))
	assert.NilError(t, err)
	got := map[uint64]string{}
	for _, p := range globalPaths(js, func(i int) bool { return js.ClassName(i) == "Map" }) {
		got[js.ID(p.node)] = p.expr
	}
	assert.DeepEqual(t, got, map[uint64]string{
		5:  `?.["cache"]`,
		6:  `?.["list"]?.[2]`,
		10: `?.["cache"]?.["a \"quoted\" name"]`,
	})
}
