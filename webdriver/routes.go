package webdriver

import "strings"

// route is a W3C classic command: its URI template and the methods it
// accepts (WebDriver §6.5 "Endpoints").
type route struct {
	path    string
	methods []string
}

// classicRoutes is the spec's endpoint table. Paths are relative to the
// server root; {id} is the session id. New session, delete session and
// status are handled by the server itself and are not listed here.
var classicRoutes = []route{
	{"/session/{id}/timeouts", []string{"GET", "POST"}},
	{"/session/{id}/url", []string{"GET", "POST"}},
	{"/session/{id}/back", []string{"POST"}},
	{"/session/{id}/forward", []string{"POST"}},
	{"/session/{id}/refresh", []string{"POST"}},
	{"/session/{id}/title", []string{"GET"}},
	{"/session/{id}/window", []string{"GET", "POST", "DELETE"}},
	{"/session/{id}/window/new", []string{"POST"}},
	{"/session/{id}/window/handles", []string{"GET"}},
	{"/session/{id}/window/rect", []string{"GET", "POST"}},
	{"/session/{id}/window/maximize", []string{"POST"}},
	{"/session/{id}/window/minimize", []string{"POST"}},
	{"/session/{id}/window/fullscreen", []string{"POST"}},
	{"/session/{id}/frame", []string{"POST"}},
	{"/session/{id}/frame/parent", []string{"POST"}},
	{"/session/{id}/element", []string{"POST"}},
	{"/session/{id}/elements", []string{"POST"}},
	{"/session/{id}/element/active", []string{"GET"}},
	{"/session/{id}/element/{eid}/element", []string{"POST"}},
	{"/session/{id}/element/{eid}/elements", []string{"POST"}},
	{"/session/{id}/element/{eid}/shadow", []string{"GET"}},
	{"/session/{id}/shadow/{sid}/element", []string{"POST"}},
	{"/session/{id}/shadow/{sid}/elements", []string{"POST"}},
	{"/session/{id}/element/{eid}/selected", []string{"GET"}},
	{"/session/{id}/element/{eid}/attribute/{name}", []string{"GET"}},
	{"/session/{id}/element/{eid}/property/{name}", []string{"GET"}},
	{"/session/{id}/element/{eid}/css/{name}", []string{"GET"}},
	{"/session/{id}/element/{eid}/text", []string{"GET"}},
	{"/session/{id}/element/{eid}/name", []string{"GET"}},
	{"/session/{id}/element/{eid}/rect", []string{"GET"}},
	{"/session/{id}/element/{eid}/enabled", []string{"GET"}},
	{"/session/{id}/element/{eid}/computedrole", []string{"GET"}},
	{"/session/{id}/element/{eid}/computedlabel", []string{"GET"}},
	{"/session/{id}/element/{eid}/click", []string{"POST"}},
	{"/session/{id}/element/{eid}/clear", []string{"POST"}},
	{"/session/{id}/element/{eid}/value", []string{"POST"}},
	{"/session/{id}/element/{eid}/screenshot", []string{"GET"}},
	{"/session/{id}/source", []string{"GET"}},
	{"/session/{id}/execute/sync", []string{"POST"}},
	{"/session/{id}/execute/async", []string{"POST"}},
	{"/session/{id}/cookie", []string{"GET", "POST", "DELETE"}},
	{"/session/{id}/cookie/{name}", []string{"GET", "DELETE"}},
	{"/session/{id}/actions", []string{"POST", "DELETE"}},
	{"/session/{id}/alert/dismiss", []string{"POST"}},
	{"/session/{id}/alert/accept", []string{"POST"}},
	{"/session/{id}/alert/text", []string{"GET", "POST"}},
	{"/session/{id}/screenshot", []string{"GET"}},
	{"/session/{id}/print", []string{"POST"}},
}

// classicTable matches request paths against classicRoutes segment by
// segment. One lookup replaces a regular expression per route and method
// (gorilla/mux tries them in turn): that was a third of wdext's CPU time
// per proxied command.
type classicTable [][]string // per route: its segments, "" for a {variable}

var classic = func() classicTable {
	t := make(classicTable, len(classicRoutes))
	for i, rt := range classicRoutes {
		segs := strings.Split(strings.TrimPrefix(rt.path, "/"), "/")
		for j, s := range segs {
			if strings.HasPrefix(s, "{") {
				segs[j] = ""
			}
		}
		t[i] = segs
	}
	return t
}()

// lookup returns the methods of the classic command at path, or nil.
func (t classicTable) lookup(path string) []string {
	path, ok := strings.CutPrefix(path, "/")
	if !ok {
		return nil
	}
next:
	for i, segs := range t {
		rest := path
		for j, want := range segs {
			seg, tail, more := strings.Cut(rest, "/")
			if seg == "" || (want != "" && seg != want) || more != (j < len(segs)-1) {
				continue next
			}
			rest = tail
		}
		return classicRoutes[i].methods
	}
	return nil
}
