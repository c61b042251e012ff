package measurement

import (
	"testing"

	"github.com/wdext/wdext/wire"
	"gotest.tools/v3/assert"
)

func TestExtractContainerElementAttributes(t *testing.T) {
	for _, tc := range []struct {
		el   ContainerElement
		want wire.MemoryAttributionContainer
	}{
		{ContainerElement{LocalName: "iframe", ID: "a", Src: "s", Data: "d"}, wire.MemoryAttributionContainer{ID: "a", Src: "s"}},
		{ContainerElement{LocalName: "frame", ID: "a", Src: "s", Data: "d"}, wire.MemoryAttributionContainer{ID: "a", Src: "s"}},
		{ContainerElement{LocalName: "object", ID: "a", Src: "s", Data: "d"}, wire.MemoryAttributionContainer{ID: "a", Src: "d"}},
		{ContainerElement{LocalName: "OBJECT", ID: "a", Data: "d"}, wire.MemoryAttributionContainer{ID: "a", Src: "d"}}, // CDP nodeName
		{ContainerElement{LocalName: "embed", ID: "a", Src: "s"}, wire.MemoryAttributionContainer{ID: "a", Src: "s"}},   // not in the spec
		{ContainerElement{LocalName: "iframe"}, wire.MemoryAttributionContainer{}},                                      // no attributes
	} {
		t.Run(tc.el.LocalName, func(t *testing.T) {
			assert.Equal(t, ExtractContainerElementAttributes(tc.el), tc.want)
		})
	}
}

func TestObtainWindowMemoryAttributionToken(t *testing.T) {
	const a, b, c = "https://a.test", "https://b.test", "https://c.test"
	el := &ContainerElement{LocalName: "iframe", ID: "here", Src: "/here"}
	here := &wire.MemoryAttributionContainer{ID: "here", Src: "/here"}
	outer := &wire.MemoryAttributionContainer{ID: "outer", Src: b + "/"}
	for _, tc := range []struct {
		name                     string
		origin, parent, topLevel string
		element                  *ContainerElement
		parentToken              *MemoryAttributionToken
		want                     MemoryAttributionToken
	}{
		{name: "top-level (step 1)", origin: a, topLevel: a},
		{
			name:   "same-origin child (step 4)",
			origin: a, parent: a, topLevel: a, element: el, parentToken: &MemoryAttributionToken{},
			want: MemoryAttributionToken{Container: here},
		},
		{
			name:   "cross-origin child (step 5)",
			origin: b, parent: a, topLevel: a, element: el, parentToken: &MemoryAttributionToken{},
			want: MemoryAttributionToken{Container: here, CrossOriginAggregated: true},
		},
		{
			name:   "inside a cross-origin frame (step 2)",
			origin: c, parent: b, topLevel: a, element: el,
			parentToken: &MemoryAttributionToken{Container: outer, CrossOriginAggregated: true},
			want:        MemoryAttributionToken{Container: outer, CrossOriginAggregated: true},
		},
		{
			// The spec returns the parent token; its example reveals
			// the realm under the parent's container instead.
			name:   "top-level origin inside a cross-origin frame (step 2, deviation)",
			origin: a, parent: b, topLevel: a, element: el,
			parentToken: &MemoryAttributionToken{Container: outer, CrossOriginAggregated: true},
			want:        MemoryAttributionToken{Container: outer},
		},
		{
			name:   "cross-origin inside a same-origin frame nested in a cross-origin one",
			origin: c, parent: a, topLevel: a, element: el,
			parentToken: &MemoryAttributionToken{Container: outer},
			want:        MemoryAttributionToken{Container: here, CrossOriginAggregated: true},
		},
		{
			name:   "opaque origins are never the top-level origin",
			origin: "null", parent: a, topLevel: a, element: el, parentToken: &MemoryAttributionToken{},
			want: MemoryAttributionToken{Container: here, CrossOriginAggregated: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ObtainWindowMemoryAttributionToken(tc.origin, tc.parent, tc.topLevel, tc.element, tc.parentToken)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

func TestObtainWorkerMemoryAttributionToken(t *testing.T) {
	owner := MemoryAttributionToken{Container: &wire.MemoryAttributionContainer{ID: "x"}, CrossOriginAggregated: true}
	assert.DeepEqual(t, ObtainWorkerMemoryAttributionToken(wire.ScopeDedicatedWorker, owner), owner)
	assert.DeepEqual(t, ObtainWorkerMemoryAttributionToken(wire.ScopeSharedWorker, owner), MemoryAttributionToken{})
	assert.DeepEqual(t, ObtainWorkerMemoryAttributionToken(wire.ScopeServiceWorker, owner), MemoryAttributionToken{})
}

func TestRealmMemoryAttributionToken(t *testing.T) {
	exampleID := &wire.MemoryAttributionContainer{ID: "example-id", Src: fooCom + "/iframe1"}
	for _, tc := range []struct {
		name  string
		realm *Realm
		want  MemoryAttributionToken
	}{
		{"top-level window", top, MemoryAttributionToken{}},
		{"worker of the top level", worker, MemoryAttributionToken{}},
		{"service worker", serviceWorker, MemoryAttributionToken{}},
		{"cross-origin iframe", fooIframe1, MemoryAttributionToken{Container: exampleID, CrossOriginAggregated: true}},
		{"its same-origin child", fooIframe2, MemoryAttributionToken{Container: exampleID, CrossOriginAggregated: true}},
		{"its object child", barIframe2, MemoryAttributionToken{Container: exampleID, CrossOriginAggregated: true}},
		{"its worker", fooWorker, MemoryAttributionToken{Container: exampleID, CrossOriginAggregated: true}},
		{"top-level origin inside it", exampleIframe2, MemoryAttributionToken{Container: exampleID}},
		{
			"worker of that", &Realm{Global: wire.ScopeDedicatedWorker, Origin: exampleCom, Parent: exampleIframe2},
			MemoryAttributionToken{Container: exampleID},
		},
		{
			// Without its element a nested window must still not pass
			// for top-level, or its cross-origin URL would show.
			"cross-origin iframe with unknown element", &Realm{Global: wire.ScopeWindow, Origin: fooCom, Parent: top},
			MemoryAttributionToken{Container: &wire.MemoryAttributionContainer{}, CrossOriginAggregated: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.DeepEqual(t, tc.realm.MemoryAttributionToken(), tc.want)
		})
	}
}

func TestCreateNewMemoryAttribution(t *testing.T) {
	assert.DeepEqual(t, CreateNewMemoryAttribution(top), wire.MemoryAttribution{URL: exampleCom, Scope: wire.ScopeWindow})
	assert.DeepEqual(t, CreateNewMemoryAttribution(worker), wire.MemoryAttribution{URL: exampleCom + "/worker.js", Scope: wire.ScopeDedicatedWorker})
	assert.DeepEqual(t, CreateNewMemoryAttribution(barIframe2), wire.MemoryAttribution{
		URL:       wire.CrossOriginURL,
		Container: &wire.MemoryAttributionContainer{ID: "example-id", Src: fooCom + "/iframe1"},
		Scope:     wire.ScopeCrossOriginAggregated,
	})
}
