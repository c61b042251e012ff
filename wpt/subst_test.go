package wpt

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestSubstitutions(t *testing.T) {
	root := writeTree(t, map[string]string{"dir/data.txt": "hello\n"})
	p := []int{8000, 8001} // no TLS: every scheme gets the HTTP ports
	st := newSite(root, loopbackHostTable("127.0.0.1", "localhost"), map[string][]int{"http": p, "https": p, "ws": p, "wss": p})
	r := httptest.NewRequest("GET", "http://localhost:8002/dir/page.sub.html?a=1&b=x+y&b=2&empty=&pipe=sub", nil)
	r.Header.Set("X-Test", "present")

	for expr, want := range map[string]string{
		"{{host}}":                                     "127.0.0.1",
		"{{ host }}":                                   "127.0.0.1",
		"{{host }}":                                    "127.0.0.1",
		"{{domains[]}}":                                "127.0.0.1",
		"{{domains[www]}}":                             "localhost",
		"{{domains[www1]}}":                            "localhost",
		"{{domains[www2]}}":                            "localhost",
		"{{domains[élève]}}":                           "localhost",
		"{{domains[天気の良い日]}}":                          "localhost",
		"{{domains[nonexistent]}}":                     "nonexistent.invalid",
		"{{hosts[][]}}":                                "127.0.0.1",
		"{{hosts[][www]}}":                             "localhost",
		"{{hosts[alt][]}}":                             "localhost",
		"{{hosts[alt][www1]}}":                         "localhost",
		"{{ports[http][0]}}":                           "8000",
		"{{ports[http][1]}}":                           "8001",
		"{{ports[https][0]}}":                          "8000",
		"{{ports[https][1]}}":                          "8001",
		"{{ports[ws][0]}}":                             "8000",
		"{{ports[wss][0]}}":                            "8000",
		"{{location[host]}}":                           "localhost:8002",
		"{{location[hostname]}}":                       "localhost",
		"{{location[port]}}":                           "8002",
		"{{location[scheme]}}":                         "http",
		"{{location[server]}}":                         "http://localhost:8002",
		"{{location[path]}}":                           "/dir/page.sub.html",
		"{{location[pathname]}}":                       "/dir/page.sub.html",
		"{{location[query]}}":                          "?a=1&b=x+y&b=2&empty=&pipe=sub",
		"{{location[href]}}":                           "http://localhost:8002/dir/page.sub.html?a=1&b=x+y&b=2&empty=&pipe=sub",
		"{{GET[a]}}":                                   "1",
		"{{GET[b]}}":                                   "x y",
		"{{GET[empty]}}":                               "",
		"{{GET[missing]}}":                             "",
		"{{headers[x-test]}}":                          "present",
		"{{header_or_default(X-Test, d)}}":             "present",
		"{{header_or_default(X-None, default value)}}": "default value",
		"{{url_base}}":                                 "/",
		"{{file_hash(sha256, dir/data.txt)}}":          "WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=",
		"{{file_hash(md5, /dir/data.txt)}}":            "sZRqySSS0jR8YjW00mERhA==",
		"{{$id:host}}-{{$id}}":                         "127.0.0.1-127.0.0.1",
		"a {{host}} b {{ports[http][0]}} c":            "a 127.0.0.1 b 8000 c",
		"{{host":                                       "{{host",
	} {
		got, err := st.expand(r, []byte(expr), false)
		if assert.Check(t, err, expr) {
			assert.Check(t, is.Equal(string(got), want), expr)
		}
	}

	got, err := st.expand(r, []byte("{{uuid()}} {{$u:uuid()}} {{$u}}"), false)
	assert.NilError(t, err)
	parts := strings.Fields(string(got))
	assert.Assert(t, is.Len(parts, 3))
	assert.Check(t, is.Regexp(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, parts[0]))
	assert.Check(t, parts[0] != parts[1], "every uuid() is new")
	assert.Check(t, is.Equal(parts[1], parts[2]), "a variable keeps its value")

	for _, bad := range []string{
		"{{nope}}", "{{domains[bogus]}}", "{{hosts[other][]}}", "{{ports[http][2]}}",
		"{{ports[h2][0]}}", "{{ports[http][x]}}", "{{location[nope]}}", "{{headers[X-None]}}",
		"{{host[0]}}", "{{uuid}}", "{{uuid(1)}}", "{{header_or_default(a)}}",
		"{{file_hash(crc32, dir/data.txt)}}", "{{file_hash(md5, missing)}}", "{{host+1}}",
		"{{}}", "{{[0]}}", "{{$v}}",
	} {
		_, err := st.expand(r, []byte("x "+bad), false)
		assert.Check(t, is.ErrorContains(err, bad), "the error quotes the expression")
	}
}

func TestSubstitutionEscaping(t *testing.T) {
	st := newSite(t.TempDir(), loopbackHostTable("127.0.0.1", "localhost"), map[string][]int{"http": {1}})
	r := httptest.NewRequest("GET", `http://127.0.0.1:1/x?v=%3C%26%22%27%3E`, nil)
	got, err := st.expand(r, []byte("{{GET[v]}}"), true)
	assert.NilError(t, err)
	assert.Equal(t, string(got), "&lt;&amp;&#34;&#39;&gt;")
	got, err = st.expand(r, []byte("{{GET[v]}}"), false)
	assert.NilError(t, err)
	assert.Equal(t, string(got), `<&"'>`)
}

func TestPortsBeforeStart(t *testing.T) {
	st := newSite(t.TempDir(), loopbackHostTable("127.0.0.1", "localhost"), nil)
	r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	_, err := st.expand(r, []byte("{{ports[http][0]}}"), false)
	assert.ErrorContains(t, err, "not started")
}

// With WPT's host names and TLS, every kind of host and port substitution
// gives what wptserve's does.
func TestSubstitutionsWPTHosts(t *testing.T) {
	st := newSite(t.TempDir(), wptHostTable(), map[string][]int{
		"http": {8000, 8001}, "ws": {8000, 8001}, "https": {8443, 8444}, "wss": {8443, 8444},
	})
	r := httptest.NewRequest("GET", "https://www1.web-platform.test:8443/a.sub.html", nil)
	for expr, want := range map[string]string{
		"{{host}}":                    "web-platform.test",
		"{{domains[]}}":               "web-platform.test",
		"{{domains[www]}}":            "www.web-platform.test",
		"{{domains[www1]}}":           "www1.web-platform.test",
		"{{domains[www2]}}":           "www2.web-platform.test",
		"{{domains[天気の良い日]}}":         "xn--n8j6ds53lwwkrqhv28a.web-platform.test",
		"{{domains[élève]}}":          "xn--lve-6lad.web-platform.test",
		"{{domains[nonexistent]}}":    "nonexistent.web-platform.test",
		"{{hosts[][]}}":               "web-platform.test",
		"{{hosts[][www2]}}":           "www2.web-platform.test",
		"{{hosts[alt][]}}":            "not-web-platform.test",
		"{{hosts[alt][www]}}":         "www.not-web-platform.test",
		"{{hosts[alt][www1]}}":        "www1.not-web-platform.test",
		"{{hosts[alt][élève]}}":       "xn--lve-6lad.not-web-platform.test",
		"{{hosts[alt][nonexistent]}}": "nonexistent.not-web-platform.test",
		"{{ports[http][0]}}":          "8000",
		"{{ports[http][1]}}":          "8001",
		"{{ports[https][0]}}":         "8443",
		"{{ports[https][1]}}":         "8444",
		"{{ports[ws][1]}}":            "8001",
		"{{ports[wss][0]}}":           "8443",
		"{{location[scheme]}}":        "https",
		"{{location[hostname]}}":      "www1.web-platform.test",
	} {
		got, err := st.expand(r, []byte(expr), false)
		if assert.Check(t, err, expr) {
			assert.Check(t, is.Equal(string(got), want), expr)
		}
	}
	for _, bad := range []string{"{{domains[xn--lve-6lad]}}", "{{hosts[alt2][]}}", "{{ports[https][2]}}", "{{ports[h2][0]}}"} {
		_, err := st.expand(r, []byte(bad), false)
		assert.Check(t, is.ErrorContains(err, bad))
	}
}

// nextTemplate finds what wptserve's pattern, \{\{([^}]*)\}\}, finds.
func TestNextTemplateIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`\{\{([^}]*)\}\}`)
	for _, s := range []string{"", "{{a}}", "x{{a}}y{{b}}", "{{{a}}", "{{a}b}}", "{{a", "{{a}", "}}{{", "{{}}", "{{ {{a}} }}", "{{a}x{{b}}", "{{{{}}}}"} {
		assert.Check(t, is.DeepEqual(nextTemplate([]byte(s)), re.FindIndex([]byte(s))), "%q", s)
	}
}
