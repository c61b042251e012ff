package polyfill

import (
	"net/http"
	"regexp"
	"strings"
)

// JSProfilingAllowed reports whether a response's Document-Policy header
// allows js-profiling: a structured-field dictionary whose js-profiling
// member is a bare key or ?1 (?0 and absent: not allowed; a header that
// does not parse counts as absent, as Document Policy says).
func JSProfilingAllowed(h http.Header) bool {
	allowed := false
	for _, line := range h.Values("Document-Policy") {
		for _, member := range strings.Split(line, ",") {
			// key[=value][;params]
			m := strings.TrimSpace(member)
			key, value, hasValue := m, "", false
			if i := strings.IndexAny(m, "=;"); i >= 0 {
				key = m[:i]
				if m[i] == '=' {
					value, _, _ = strings.Cut(m[i+1:], ";")
					value, hasValue = strings.TrimSpace(value), true
				}
			}
			if strings.TrimSpace(key) != "js-profiling" {
				continue
			}
			switch {
			case !hasValue || value == "?1":
				allowed = true
			case value == "?0":
				allowed = false
			}
		}
	}
	return allowed
}

// prologue is what may come before the injected script: a BOM, blanks,
// comments and the doctype.
var prologue = regexp.MustCompile(`(?is)^(\x{FEFF})?(\s|<!--.*?-->)*(<!doctype[^>]*>)?`)

// InjectPolicy puts, after the prologue of an HTML document whose response
// carries header, a script that tells the Profiler polyfill the
// document's Document-Policy (SetPolicyScript): for a server or proxy
// that serves documents to sessions whose documents run the polyfill
// first but cannot know the policy (a preload script, an inspector's
// bootstrap script). Where the polyfill is absent the script does
// nothing.
func InjectPolicy(body []byte, header http.Header) []byte {
	return InjectScript(body, []byte("<script>"+SetPolicyScript(JSProfilingAllowed(header))+"</script>"))
}

// InjectScript puts script (an element: "<script>…</script>") after an
// HTML document's prologue, so that it runs before the document's own
// scripts.
func InjectScript(body, script []byte) []byte {
	n := len(prologue.Find(body))
	out := make([]byte, 0, len(body)+len(script))
	out = append(out, body[:n]...)
	out = append(out, script...)
	return append(out, body[n:]...)
}
