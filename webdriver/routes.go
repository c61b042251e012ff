package webdriver

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
