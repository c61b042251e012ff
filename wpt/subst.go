package wpt

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"html"
	"io"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// site is what substitutions know about the server: its host names (by
// WPT's "" and "alt" host keys, then subdomain) and its ports by scheme.
type site struct {
	root  string
	hosts map[string]map[string]string
	ports map[string][]int
}

// The host names of WPT's config (config.default.json): browser_host, the
// "alt" alternate host, and the subdomains wptserve puts under both, each
// with the IDNA label its config derives from the name. "nonexistent" is
// one of WPT's not_subdomains: in {{domains[…]}} but never resolvable.
const (
	wptHost    = "web-platform.test"
	wptAltHost = "not-web-platform.test"
)

var wptSubdomains = []struct{ name, label string }{
	{"www", "www"}, {"www1", "www1"}, {"www2", "www2"},
	{"天気の良い日", "xn--n8j6ds53lwwkrqhv28a"}, {"élève", "xn--lve-6lad"},
}

// wptHostTable is wptserve's all_domains for WPT's own host names:
// {"": {"": "web-platform.test", "www1": "www1.web-platform.test", …},
// "alt": {"": "not-web-platform.test", …}}.
func wptHostTable() map[string]map[string]string {
	names := func(host string) map[string]string {
		m := map[string]string{"": host, "nonexistent": "nonexistent." + host}
		for _, sub := range wptSubdomains {
			m[sub.name] = sub.label + "." + host
		}
		return m
	}
	return map[string]map[string]string{"": names(wptHost), "alt": names(wptAltHost)}
}

// loopbackHostTable maps the same keys onto two loopback names, for
// browsers that cannot be told to resolve WPT's: every subdomain becomes
// the alternate host (see the package documentation).
func loopbackHostTable(mainHost, altHost string) map[string]map[string]string {
	names := func(host string) map[string]string {
		m := map[string]string{"": host, "nonexistent": "nonexistent.invalid"}
		for _, sub := range wptSubdomains {
			m[sub.name] = altHost
		}
		return m
	}
	return map[string]map[string]string{"": names(mainHost), "alt": names(altHost)}
}

// newSite describes a server: hosts as from wptHostTable or
// loopbackHostTable, ports by scheme (empty before the server starts).
func newSite(root string, hosts map[string]map[string]string, ports map[string][]int) *site {
	if ports == nil {
		ports = map[string][]int{}
	}
	return &site{root: root, hosts: hosts, ports: ports}
}

// substituter expands wptserve's {{…}} templates for one request.
type substituter struct {
	site *site
	r    *http.Request
	vars map[string]string   // $name: assignments, per document as in wptserve
	get  map[string][]string // the query, parsed at the first {{GET[…]}}
}

// nextTemplate finds the first {{expression}} in b, the expression
// without a '}' (as wptserve's template pattern): its start and end, or
// nil. By hand rather than by regular expression: the backtracker's state
// grows with the content searched, on every call.
func nextTemplate(b []byte) []int {
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte("{{"))
		if i < 0 {
			return nil
		}
		i += off
		j := bytes.IndexByte(b[i+2:], '}')
		if j < 0 {
			return nil
		}
		if j += i + 2; j+1 < len(b) && b[j+1] == '}' {
			return []int{i, j + 2}
		}
		off = i + 1
	}
}

// expand replaces every {{expression}} in content, HTML-escaping values when
// escapeHTML is set. The first failing expression is returned as an error.
// The output is bounded (maxBuffered: a query value repeated by a million
// {{GET[x]}} reached 19 GB in wptserve's manner), and the work stops when
// the request's context ends (the client left).
func (s *site) expand(r *http.Request, content []byte, escapeHTML bool) ([]byte, error) {
	sub := &substituter{site: s, r: r, vars: map[string]string{}}
	ctx := r.Context()
	out := make([]byte, 0, min(len(content), maxBuffered))
	for rest := content; ; {
		loc := nextTemplate(rest)
		if loc == nil {
			out = append(out, rest...)
			break
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("substitution stopped: %w", context.Cause(ctx))
		}
		m := rest[loc[0]:loc[1]]
		v, err := sub.eval(string(m[2 : len(m)-2]))
		if err != nil {
			return nil, fmt.Errorf("substitution %s: %w", m, err)
		}
		if escapeHTML {
			v = html.EscapeString(v)
		}
		if len(out)+loc[0]+len(v) > maxBuffered {
			return nil, errSubTooLarge
		}
		if n := loc[0] + len(v); len(out)+n > cap(out) {
			// Doubling, not append's 1.25: what growing leaves behind
			// stays under twice the bound.
			out = slices.Grow(out, max(n, min(cap(out), maxBuffered-len(out))))
		}
		out = append(append(out, rest[:loc[0]]...), v...)
		rest = rest[loc[1]:]
	}
	if len(out) > maxBuffered {
		return nil, errSubTooLarge
	}
	return out, nil
}

var errSubTooLarge = fmt.Errorf("substitution: the output passed %d MiB, the most wdext's WPT server makes", maxBuffered>>20)

type tokenKind int

const (
	tokVar   tokenKind = iota // "$name:" assignment target
	tokIdent                  // name or $name
	tokIndex                  // [key]
	tokArgs                   // (a, b)
)

type token struct {
	kind tokenKind
	text string // name, or index key
	args []string
}

// The token patterns of wptserve's ReplacementTokenizer.
var tokenREs = []struct {
	kind tokenKind
	re   *regexp.Regexp
}{
	{tokVar, regexp.MustCompile(`^\$\w+:`)},
	{tokIdent, regexp.MustCompile(`^\$?\w+`)},
	{tokIndex, regexp.MustCompile(`^\[[^\]]*\]`)},
	{tokArgs, regexp.MustCompile(`^\([^)]*\)`)},
}

// argSepRE splits arguments as wptserve does: on commas, eating the spaces
// after them.
var argSepRE = regexp.MustCompile(`,\s*`)

func tokenize(expr string) ([]token, error) {
	var toks []token
	rest := strings.TrimSpace(expr)
next:
	for rest != "" {
		for _, t := range tokenREs {
			m := t.re.FindString(rest)
			if m == "" {
				continue
			}
			rest = rest[len(m):]
			switch t.kind {
			case tokVar:
				toks = append(toks, token{kind: tokVar, text: m[:len(m)-1]})
			case tokIdent:
				toks = append(toks, token{kind: tokIdent, text: m})
			case tokIndex:
				toks = append(toks, token{kind: tokIndex, text: m[1 : len(m)-1]})
			case tokArgs:
				var args []string
				if inner := m[1 : len(m)-1]; inner != "" {
					args = argSepRE.Split(inner, -1)
				}
				toks = append(toks, token{kind: tokArgs, args: args})
			}
			continue next
		}
		return nil, fmt.Errorf("cannot parse %q", rest)
	}
	return toks, nil
}

func (s *substituter) eval(expr string) (string, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return "", err
	}
	variable := ""
	if len(toks) > 0 && toks[0].kind == tokVar {
		variable, toks = toks[0].text, toks[1:]
	}
	if len(toks) == 0 || toks[0].kind != tokIdent {
		return "", fmt.Errorf("expected a name")
	}
	v, err := s.lookup(toks[0].text, toks[1:])
	if err != nil {
		return "", err
	}
	if variable != "" {
		s.vars[variable] = v
	}
	return v, nil
}

// lookup resolves name followed by its index or argument tokens.
func (s *substituter) lookup(name string, rest []token) (string, error) {
	if v, ok := s.vars[name]; ok {
		return v, want(name, rest, 0)
	}
	if resolve, ok := resolvers[name]; ok {
		return resolve(s, name, rest)
	}
	return "", fmt.Errorf("undefined template variable %q", name)
}

// resolvers resolve wptserve's template names, each with its index or
// argument tokens.
var resolvers = map[string]func(s *substituter, name string, rest []token) (string, error){
	"host":              (*substituter).host,
	"url_base":          func(_ *substituter, name string, rest []token) (string, error) { return "/", want(name, rest, 0) },
	"domains":           (*substituter).domain,
	"hosts":             (*substituter).domain,
	"ports":             (*substituter).port,
	"location":          (*substituter).locationPart,
	"headers":           (*substituter).header,
	"GET":               (*substituter).query,
	"uuid":              (*substituter).uuid,
	"header_or_default": (*substituter).headerOrDefault,
	"file_hash":         (*substituter).fileHashCall,
}

// host is {{host}}, the main host name.
func (s *substituter) host(name string, rest []token) (string, error) {
	return s.site.hosts[""][""], want(name, rest, 0)
}

// domain is {{domains[sub]}} or {{hosts[host][sub]}}: a host name, by
// host key ("" or "alt"; domains' is "") and subdomain.
func (s *substituter) domain(name string, rest []token) (string, error) {
	keys, err := indexes(name, rest, map[string]int{"domains": 1, "hosts": 2}[name])
	if err != nil {
		return "", err
	}
	if name == "domains" {
		keys = append([]string{""}, keys...)
	}
	sub, ok := s.site.hosts[keys[0]]
	if !ok {
		return "", fmt.Errorf("no host %q", keys[0])
	}
	h, ok := sub[keys[1]]
	if !ok {
		return "", fmt.Errorf("no subdomain %q", keys[1])
	}
	return h, nil
}

// port is {{ports[scheme][i]}}.
func (s *substituter) port(name string, rest []token) (string, error) {
	keys, err := indexes(name, rest, 2)
	if err != nil {
		return "", err
	}
	ports, ok := s.site.ports[keys[0]]
	if !ok {
		return "", fmt.Errorf("no %q ports (server not started, or scheme unsupported)", keys[0])
	}
	i, err := strconv.Atoi(keys[1])
	if err != nil || i < 0 || i >= len(ports) {
		return "", fmt.Errorf("no %s port %q (a second port needs Options.SecondPort)", keys[0], keys[1])
	}
	return strconv.Itoa(ports[i]), nil
}

// locationPart is {{location[part]}}, a part of the request's URL.
func (s *substituter) locationPart(name string, rest []token) (string, error) {
	keys, err := indexes(name, rest, 1)
	if err != nil {
		return "", err
	}
	v, ok := location(s.r)[keys[0]]
	if !ok {
		return "", fmt.Errorf("no location part %q", keys[0])
	}
	return v, nil
}

// header is {{headers[name]}}, a request header's values.
func (s *substituter) header(name string, rest []token) (string, error) {
	keys, err := indexes(name, rest, 1)
	if err != nil {
		return "", err
	}
	vs := s.r.Header.Values(keys[0])
	if len(vs) == 0 {
		return "", fmt.Errorf("no request header %q", keys[0])
	}
	return strings.Join(vs, ", "), nil
}

// query is {{GET[name]}}, a query parameter's first value, or "".
func (s *substituter) query(name string, rest []token) (string, error) {
	keys, err := indexes(name, rest, 1)
	if err != nil {
		return "", err
	}
	if s.get == nil {
		s.get = parseQuery(s.r.URL.RawQuery, true)
	}
	if vs := s.get[keys[0]]; len(vs) > 0 {
		return vs[0], nil
	}
	return "", nil
}

// uuid is {{uuid()}}, a new random UUID.
func (s *substituter) uuid(name string, rest []token) (string, error) {
	if _, err := call(name, rest, 0); err != nil {
		return "", err
	}
	return newUUID(), nil
}

// headerOrDefault is {{header_or_default(name, default)}}.
func (s *substituter) headerOrDefault(name string, rest []token) (string, error) {
	args, err := call(name, rest, 2)
	if err != nil {
		return "", err
	}
	if vs := s.r.Header.Values(args[0]); len(vs) > 0 {
		return strings.Join(vs, ", "), nil
	}
	return args[1], nil
}

// fileHashCall is {{file_hash(algorithm, path)}}.
func (s *substituter) fileHashCall(name string, rest []token) (string, error) {
	args, err := call(name, rest, 2)
	if err != nil {
		return "", err
	}
	return s.fileHash(args[0], args[1])
}

// want checks that name is used with exactly n [index] tokens.
func want(name string, rest []token, n int) error {
	if len(rest) != n {
		return fmt.Errorf("%s takes %d index(es), got %d", name, n, len(rest))
	}
	for _, t := range rest {
		if t.kind != tokIndex {
			return fmt.Errorf("%s takes [index], not arguments", name)
		}
	}
	return nil
}

func indexes(name string, rest []token, n int) ([]string, error) {
	if err := want(name, rest, n); err != nil {
		return nil, err
	}
	keys := make([]string, n)
	for i, t := range rest {
		keys[i] = t.text
	}
	return keys, nil
}

// call checks that name is called as a function with n arguments.
func call(name string, rest []token, n int) ([]string, error) {
	if len(rest) != 1 || rest[0].kind != tokArgs || len(rest[0].args) != n {
		return nil, fmt.Errorf("%s must be called with %d argument(s)", name, n)
	}
	return rest[0].args, nil
}

// location is wptserve's view of the request URL; href is an addition.
func location(r *http.Request) map[string]string {
	hostname, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		hostname, port = r.Host, "80"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	server := scheme + "://" + net.JoinHostPort(hostname, port)
	href := server + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		href += "?" + r.URL.RawQuery
	}
	return map[string]string{
		"server":   server,
		"scheme":   scheme,
		"host":     net.JoinHostPort(hostname, port),
		"hostname": hostname,
		"port":     port,
		"path":     r.URL.EscapedPath(),
		"pathname": r.URL.EscapedPath(),
		"query":    "?" + r.URL.RawQuery,
		"href":     href,
	}
}

var hashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224,
	"sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New,
}

// fileHash is wptserve's file_hash(algorithm, path): the base64 digest of
// a file named relative to the root.
func (s *substituter) fileHash(algorithm, name string) (string, error) {
	newHash, ok := hashes[algorithm]
	if !ok {
		return "", fmt.Errorf("unsupported hash algorithm %q", algorithm)
	}
	f, _, err := openRegular(filepath.Join(s.site.root, filepath.FromSlash(path.Clean("/"+name))))
	if err != nil {
		return "", fmt.Errorf("cannot hash %s: %w", name, err)
	}
	defer f.Close()
	h := newHash()
	// Streamed, and stopped when the client leaves.
	if _, err := io.Copy(h, ctxReader{s.r.Context(), f}); err != nil {
		return "", fmt.Errorf("cannot hash %s: %w", name, err)
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
