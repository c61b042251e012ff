package webdriver

import (
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/gorilla/mux"

	"github.com/wdext/wdext/wire"
)

// endpoint is one W3C command: a method and a URI template, relative to
// the server root, as gorilla/mux writes it ({id} is the session).
type endpoint struct {
	method, path string
}

// classicEndpoints is the spec's endpoint table (WebDriver §6.5
// "Endpoints"), forwarded to the driver as they are. New session, delete
// session and status are wdext's own (see Server.router) and are not
// listed here.
var classicEndpoints = []endpoint{
	{"GET", "/session/{id}/timeouts"},
	{"POST", "/session/{id}/timeouts"},
	{"GET", "/session/{id}/url"},
	{"POST", "/session/{id}/url"},
	{"POST", "/session/{id}/back"},
	{"POST", "/session/{id}/forward"},
	{"POST", "/session/{id}/refresh"},
	{"GET", "/session/{id}/title"},
	{"GET", "/session/{id}/window"},
	{"POST", "/session/{id}/window"},
	{"DELETE", "/session/{id}/window"},
	{"POST", "/session/{id}/window/new"},
	{"GET", "/session/{id}/window/handles"},
	{"GET", "/session/{id}/window/rect"},
	{"POST", "/session/{id}/window/rect"},
	{"POST", "/session/{id}/window/maximize"},
	{"POST", "/session/{id}/window/minimize"},
	{"POST", "/session/{id}/window/fullscreen"},
	{"POST", "/session/{id}/frame"},
	{"POST", "/session/{id}/frame/parent"},
	{"POST", "/session/{id}/element"},
	{"POST", "/session/{id}/elements"},
	{"GET", "/session/{id}/element/active"},
	{"POST", "/session/{id}/element/{elementId}/element"},
	{"POST", "/session/{id}/element/{elementId}/elements"},
	{"GET", "/session/{id}/element/{elementId}/shadow"},
	{"POST", "/session/{id}/shadow/{shadowId}/element"},
	{"POST", "/session/{id}/shadow/{shadowId}/elements"},
	{"GET", "/session/{id}/element/{elementId}/selected"},
	{"GET", "/session/{id}/element/{elementId}/attribute/{name}"},
	{"GET", "/session/{id}/element/{elementId}/property/{name}"},
	{"GET", "/session/{id}/element/{elementId}/css/{name}"},
	{"GET", "/session/{id}/element/{elementId}/text"},
	{"GET", "/session/{id}/element/{elementId}/name"},
	{"GET", "/session/{id}/element/{elementId}/rect"},
	{"GET", "/session/{id}/element/{elementId}/enabled"},
	{"GET", "/session/{id}/element/{elementId}/computedrole"},
	{"GET", "/session/{id}/element/{elementId}/computedlabel"},
	{"POST", "/session/{id}/element/{elementId}/click"},
	{"POST", "/session/{id}/element/{elementId}/clear"},
	{"POST", "/session/{id}/element/{elementId}/value"},
	{"GET", "/session/{id}/element/{elementId}/screenshot"},
	{"GET", "/session/{id}/source"},
	{"POST", "/session/{id}/execute/sync"},
	{"POST", "/session/{id}/execute/async"},
	{"GET", "/session/{id}/cookie"},
	{"POST", "/session/{id}/cookie"},
	{"DELETE", "/session/{id}/cookie"},
	{"GET", "/session/{id}/cookie/{name}"},
	{"DELETE", "/session/{id}/cookie/{name}"},
	{"POST", "/session/{id}/actions"},
	{"DELETE", "/session/{id}/actions"},
	{"POST", "/session/{id}/alert/dismiss"},
	{"POST", "/session/{id}/alert/accept"},
	{"GET", "/session/{id}/alert/text"},
	{"POST", "/session/{id}/alert/text"},
	{"GET", "/session/{id}/screenshot"},
	{"POST", "/session/{id}/print"},
}

// route is an endpoint and its handler.
type route struct {
	endpoint
	h http.HandlerFunc
}

// newRouter routes the classic commands, wdext's own and the extensions
// (exts, in the order added); what no route takes is notFound's. An
// extension of a classic command's method and path takes it over from
// the proxy. Routes match in order: the classic ones first (most
// commands are), then the rest, then, per path, one that answers the
// methods no route takes "unknown method".
func (s *Server) newRouter(exts []route) *mux.Router {
	var routes []route
	for _, e := range classicEndpoints {
		if !slices.ContainsFunc(exts, func(x route) bool { return x.method == e.method && shape(x.path) == shape(e.path) }) {
			routes = append(routes, route{e, s.forwardSession})
		}
	}
	routes = append(routes,
		route{endpoint{"GET", "/status"}, s.status},
		route{endpoint{"POST", "/session"}, s.newSession},
		route{endpoint{"DELETE", "/session/{id}"}, s.deleteSession})
	routes = append(routes, exts...)

	r := mux.NewRouter()
	// No redirects to a cleaned path ("//session" → "/session"): a 301
	// without a JSON body is no WebDriver reply, and clients follow it
	// with a GET. Such paths are unknown commands, as for chromedriver.
	r.SkipClean(true)
	var paths []string               // in the order of their first route
	methods := map[string][]string{} // by the path's shape
	for _, rt := range routes {
		newRoute(r, rt.path).Methods(rt.method).HandlerFunc(rt.h)
		key := shape(rt.path)
		if methods[key] == nil {
			paths = append(paths, rt.path)
		}
		methods[key] = append(methods[key], rt.method)
	}
	// A BiDi websocket is no command: it is not among the methods of
	// its path that "unknown method" lists.
	newRoute(r, "/session/{id}").Methods("GET").Headers("Upgrade", "websocket").HandlerFunc(s.bidi)
	for _, path := range paths {
		newRoute(r, path).Handler(methodNotAllowed(methods[shape(path)]))
	}
	r.NotFoundHandler = http.HandlerFunc(s.notFound)
	return r
}

// newRoute adds a route for the URI template path. It matches by
// comparing segments, not by gorilla's Path (a regular expression per
// route tried, and another to extract variables, which were most of
// what routing a command cost): no handler reads mux.Vars; the session
// is the path's second segment (sessionOf).
func newRoute(r *mux.Router, path string) *mux.Route {
	t := strings.Split(path, "/")
	// Most routes tried fail on the last segment: compared first when it
	// is a literal.
	tail := ""
	if last := t[len(t)-1]; !strings.HasPrefix(last, "{") {
		tail = "/" + last
	}
	return r.NewRoute().MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool {
		return strings.HasSuffix(req.URL.Path, tail) && matches(t, req.URL.Path)
	})
}

// matches tells whether path has the segments of template t: the same
// count, each literal equal, each {variable} non-empty.
func matches(t []string, path string) bool {
	rest, more := path, true
	for _, seg := range t {
		if !more {
			return false // fewer segments
		}
		var s string
		s, rest, more = strings.Cut(rest, "/")
		if strings.HasPrefix(seg, "{") {
			if s == "" {
				return false
			}
		} else if s != seg {
			return false
		}
	}
	return !more // not more segments
}

// methodNotAllowed answers "unknown method", listing the allowed ones.
func methodNotAllowed(allowed []string) http.Handler {
	list := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", list)
		wire.WriteError(w, wire.Errorf(wire.UnknownMethod, "%s is not a method of %s (allowed: %s)", r.Method, r.URL.Path, list))
	})
}

// variable is a {variable} of a URI template.
var variable = regexp.MustCompile(`\{[^}]*\}`)

// shape is a URI template with its variables' names left out: templates
// of one shape match the same paths.
func shape(path string) string { return variable.ReplaceAllString(path, "{}") }

// notFound forwards anything else under a session to the driver: its
// vendor commands (goog/…, se/…) are its own business. Anything else is
// "unknown command".
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	if sessionOf(r.URL.Path) != "" {
		s.forwardSession(w, r)
		return
	}
	wire.WriteError(w, wire.Errorf(wire.UnknownCommand, "unknown command: %s %s", r.Method, r.URL.Path))
}

// stripPrefix serves both "/x" and prefix+"/x": tebeka/selenium and old
// Grid clients default to /wd/hub.
func stripPrefix(prefix string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := strings.CutPrefix(r.URL.Path, prefix); ok && (p == "" || p[0] == '/') {
			r2 := r.Clone(r.Context())
			r2.URL.Path = p
			r2.URL.RawPath = ""
			if p == "" {
				r2.URL.Path = "/"
			}
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}
