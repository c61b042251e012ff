package webkitgtk

import (
	"encoding/json"
	"testing"
)

func TestWorkerPolicy(t *testing.T) {
	a := &agent{policies: map[string]policy{
		"1": {url: "http://a:1/page.html", allowed: true},
		"2": {url: "http://b:2/x/page.html", allowed: false},
		"3": {url: "http://b:2/other.html", allowed: false},
		"4": {url: "http://c:3/", allowed: true},
		"5": {url: "http://c:3/np.html", allowed: false},
	}}
	a.response(json.RawMessage(`{"type":"Script","response":{"url":"http://a:1/w.js#x","headers":{"Document-Policy":"js-profiling"}}}`))
	a.response(json.RawMessage(`{"type":"Other","response":{"url":"http://a:1/n.js","headers":{}}}`))
	for _, c := range []struct {
		url            string
		allowed, known bool
	}{
		{"http://a:1/w.js", true, true},
		{"http://a:1/n.js", false, true},
		{"http://a:1/unseen.js", false, false},
		{"blob:http://a:1/1234-5678", true, true},
		{"blob:http://b:2/1234", false, true},
		{"blob:http://c:3/1234", false, false},   // the origin's frames disagree
		{"data:text/javascript,1", false, false}, // the page's frames disagree
	} {
		allowed, known := a.workerPolicy(c.url)
		if allowed != c.allowed || known != c.known {
			t.Errorf("%s: %v %v, want %v %v", c.url, allowed, known, c.allowed, c.known)
		}
	}
	// A data: worker of a page whose frames agree has their policy.
	a.policies = map[string]policy{"1": {url: "http://a:1/page.html", allowed: false}, "2": {url: "http://b:2/frame.html", allowed: false}}
	if allowed, known := a.workerPolicy("data:text/javascript,1"); allowed || !known {
		t.Errorf("data: worker of a denying page: %v %v, want false true", allowed, known)
	}
}
