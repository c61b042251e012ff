package webdriver

import (
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
)

// Guard rejects requests a web page could forge against a local driver,
// the lessons of geckodriver and chromedriver: a Host that is neither an IP
// literal nor an allowed name (DNS rebinding), an Origin that is not
// allowed (cross-site fetch), and POST bodies of a type a form can send
// without a CORS preflight.
type Guard struct {
	// AllowedHosts are host names accepted in the Host header besides IP
	// literals; "localhost" is always accepted.
	AllowedHosts []string
	// AllowedOrigins are the Origin values accepted; a request with any
	// other Origin is rejected. Empty means no Origin is accepted.
	AllowedOrigins []string
	// MaxBody caps request bodies in bytes (0: no cap).
	MaxBody int64
}

// Wrap returns next behind the guard.
func (g Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.check(r); err != nil {
			WriteError(w, err)
			return
		}
		if g.MaxBody > 0 && r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, g.MaxBody)
		}
		next.ServeHTTP(w, r)
	})
}

func (g Guard) check(r *http.Request) *Error {
	if !g.hostAllowed(r.Host) {
		return Errorf(UnknownError, "host header %q is not an IP address or an allowed host (see --allowed-hosts)", r.Host)
	}
	if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(g.AllowedOrigins, origin) {
		return Errorf(UnknownError, "origin %q is not allowed (see --allowed-origins)", origin)
	}
	if r.Method == http.MethodPost {
		if ct := r.Header.Get("Content-Type"); ct != "" {
			mt, _, _ := mime.ParseMediaType(ct)
			switch strings.ToLower(mt) {
			case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
				return Errorf(InvalidArgument, "content type %q is not accepted: send application/json", ct)
			}
		}
	}
	if g.MaxBody > 0 && r.ContentLength > g.MaxBody {
		return Errorf(InvalidArgument, "request body of %d bytes exceeds the limit of %d (see --max-body)", r.ContentLength, g.MaxBody)
	}
	return nil
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
