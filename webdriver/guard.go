package webdriver

import (
	"errors"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wdext/wdext/wire"
)

// Guard rejects requests a web page could forge against a local driver,
// the lessons of geckodriver and chromedriver: a Host that is neither an IP
// literal nor an allowed name (DNS rebinding), an Origin that is not
// allowed (cross-site fetch), and, from a browser, POST bodies of a type a
// form can send without a CORS preflight (geckodriver CVE-2020-15660).
//
// A browser is known by the headers a page cannot leave out or forge:
// Origin, which every current browser sends with every POST a page
// makes, and Sec-Fetch-*. A POST without them comes from a program (curl's
// -d sends application/x-www-form-urlencoded, Node's fetch of a string
// text/plain), and its body is taken for the JSON it must be, as
// chromedriver does.
//
// It also reads every request body into memory before the handler runs,
// within bounds a client cannot stretch: MaxBody per body, BodyBudget for
// all of them at once, BodyTimeout for a body that stops arriving. A body
// so read has a known length, which chromedriver insists on.
type Guard struct {
	// AllowedHosts are host names accepted in the Host header besides IP
	// literals; "localhost" is always accepted.
	AllowedHosts []string
	// AllowedOrigins are the Origin values accepted; a request with any
	// other Origin is rejected. Empty means no Origin is accepted. Scheme
	// and host compare in any case, the port exactly.
	AllowedOrigins []string
	// MaxBody caps request bodies in bytes (0: no cap), and BiDi
	// messages too.
	MaxBody int64
	// BodyBudget caps the bytes of request bodies held in memory at once,
	// across all requests of one Wrap: 0 means twice MaxBody (and no cap
	// without MaxBody); never less than MaxBody. A body that finds no
	// room within BodyTimeout is refused with "unknown error", to retry.
	BodyBudget int64
	// BodyTimeout is how long a request body may make no progress,
	// because the client sends nothing or because it waits for room in
	// BodyBudget, before it is refused and its connection closed (0:
	// DefaultBodyTimeout). Once the body is in, a command takes as long
	// as it takes.
	BodyTimeout time.Duration
	// BodyMinRate is the rate in bytes per second that a request body
	// must average beyond its first 5 s (or BodyTimeout, when shorter)
	// (0: DefaultBodyMinRate; negative: none): a client that trickles
	// bytes is refused rather than hold its room in BodyBudget for as
	// long as it likes.
	BodyMinRate int64
	// Log gets a debug line for every request the guard refuses (nil:
	// slog.Default()).
	Log *slog.Logger
}

// Wrap returns next behind the guard.
func (g Guard) Wrap(next http.Handler) http.Handler {
	log := g.Log
	if log == nil {
		log = slog.Default()
	}
	br := bodyReader{max: g.MaxBody, timeout: g.BodyTimeout, minRate: g.BodyMinRate, budget: newBudget(g.budget())}
	if br.timeout <= 0 {
		br.timeout = DefaultBodyTimeout
	}
	if br.minRate == 0 {
		br.minRate = DefaultBodyMinRate
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.check(r); err != nil {
			refuse(w, r, log, slog.LevelDebug, err)
			return
		}
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b, err := br.read(w, r)
		defer b.release()
		if err != nil {
			level := slog.LevelDebug
			if errors.Is(err, errBusy) {
				level = slog.LevelWarn // the operator may want more room
				w.Header().Set("Retry-After", "1")
			}
			refuse(w, r, log, level, bodyError(err, br.timeout))
			return
		}
		// A shallow copy, as r.WithContext makes: the body is in memory,
		// of known length, no longer chunked, and without trailers.
		r2 := *r
		r2.Body, r2.ContentLength, r2.TransferEncoding, r2.Trailer = b, b.size, nil, nil
		next.ServeHTTP(w, &r2)
	})
}

// refuse answers err, and notes it: a refused request never reaches the
// handler that logs commands.
func refuse(w http.ResponseWriter, r *http.Request, log *slog.Logger, level slog.Level, err *wire.Error) {
	if r.Body != nil && r.Body != http.NoBody {
		// net/http reads on into the body the handler left, to keep the
		// connection or to close it without a reset that would lose
		// this reply; without a deadline, for as long as the client
		// likes.
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(refuseGrace))
	}
	log.Log(r.Context(), level, "request refused",
		"method", r.Method, "path", r.URL.Path, "host", r.Host, "origin", r.Header.Get("Origin"),
		"remote", r.RemoteAddr, "error", err.Code, "why", err.Message)
	wire.WriteError(w, err)
}

// refuseGrace bounds how long net/http may read the rest of a refused
// request's body.
const refuseGrace = time.Second

// budget is the size of the body budget; 0 for none.
func (g Guard) budget() int64 {
	if g.BodyBudget > 0 {
		return max(g.BodyBudget, g.MaxBody)
	}
	return 2 * g.MaxBody
}

func (g Guard) check(r *http.Request) *wire.Error {
	if !g.hostAllowed(r.Host) {
		return wire.Errorf(wire.UnknownError, "host header %q is not an IP address or an allowed host (see --allowed-hosts)", r.Host)
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		return wire.Errorf(wire.UnknownError, "origin %q is not allowed (see --allowed-origins)", origin)
	}
	if r.Method == http.MethodPost && fromBrowser(r) {
		if ct := r.Header.Get("Content-Type"); ct != "" {
			mt, _, _ := mime.ParseMediaType(ct)
			switch strings.ToLower(mt) {
			case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
				return wire.Errorf(wire.InvalidArgument, "content type %q from a browser is not accepted: send application/json", ct)
			}
		}
	}
	if g.MaxBody > 0 && r.ContentLength > g.MaxBody {
		return wire.Errorf(wire.InvalidArgument, "request body of %d bytes exceeds the limit of %d (see --max-body)", r.ContentLength, g.MaxBody)
	}
	return nil
}

// fromBrowser reports whether r carries the headers only a browser sends
// (see Guard).
func fromBrowser(r *http.Request) bool {
	if r.Header.Get("Origin") != "" {
		return true
	}
	for name := range r.Header {
		if strings.HasPrefix(name, "Sec-Fetch-") {
			return true
		}
	}
	return false
}

func (g Guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if net.ParseIP(host) != nil {
		return true
	}
	host = strings.ToLower(host)
	return host == "localhost" || slices.ContainsFunc(g.AllowedHosts, func(a string) bool { return strings.EqualFold(a, host) })
}

func (g Guard) originAllowed(origin string) bool {
	return slices.ContainsFunc(g.AllowedOrigins, func(a string) bool { return sameOrigin(a, origin) })
}

// sameOrigin compares an allowed origin with a request's as browsers
// serialise them: the scheme and host lowercased, whatever the operator
// typed, and the port exact (a default port is never written). A path in
// the allowed entry ("http://x.example/") is not part of an origin. What
// is not a URL with a host ("null") must match exactly.
func sameOrigin(allowed, origin string) bool {
	if allowed == origin {
		return true
	}
	a, err := url.Parse(allowed)
	if err != nil || a.Host == "" {
		return false
	}
	o, err := url.Parse(origin)
	if err != nil || o.Host == "" || o.User != nil || (o.Path != "" && o.Path != "/") || o.RawQuery != "" || o.Fragment != "" {
		return false
	}
	return strings.EqualFold(a.Scheme, o.Scheme) && strings.EqualFold(a.Hostname(), o.Hostname()) && a.Port() == o.Port()
}
