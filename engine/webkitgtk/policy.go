package webkitgtk

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/wdext/wdext/polyfill"
)

// maxScripts bounds the responses an agent remembers for workers.
const maxScripts = 256

// maxFrames bounds the frames whose document's policy an agent remembers
// (a page that keeps making iframes): the oldest frame is forgotten first.
const maxFrames = 1024

// policy is what a frame's latest document response said: its URL, and
// whether its Document-Policy allows js-profiling.
type policy struct {
	url     string
	allowed bool
}

// response notes the Document-Policy of a frame's new document.
func (a *agent) response(params json.RawMessage) {
	var p struct {
		FrameID  string `json:"frameId"`
		Type     string `json:"type"`
		Response struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"response"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	h := http.Header{}
	for k, v := range p.Response.Headers {
		// WebKit joins repeated fields with ", ", as HTTP allows.
		h.Add(k, v)
	}
	allowed := polyfill.JSProfilingAllowed(h)
	if p.Type == "Document" && p.FrameID != "" {
		if _, known := a.policies[p.FrameID]; !known {
			a.frameOrder = append(a.frameOrder, p.FrameID)
			if len(a.frameOrder) > maxFrames {
				delete(a.policies, a.frameOrder[0])
				a.frameOrder = a.frameOrder[1:]
			}
		}
		a.policies[p.FrameID] = policy{url: p.Response.URL, allowed: allowed}
		return
	}
	// Perhaps a worker's script: its page fetches it before the worker
	// starts (Worker.workerCreated comes after).
	u := withoutFragment(p.Response.URL)
	if a.scripts == nil {
		a.scripts = map[string]bool{}
	}
	if _, seen := a.scripts[u]; !seen {
		a.scriptOrder = append(a.scriptOrder, u)
		if len(a.scriptOrder) > maxScripts {
			delete(a.scripts, a.scriptOrder[0])
			a.scriptOrder = a.scriptOrder[1:]
		}
	}
	a.scripts[u] = allowed
}

func withoutFragment(u string) string { return strings.SplitN(u, "#", 2)[0] }

// workerPolicy is the Document-Policy a dedicated worker gets, as the
// proposal for Document Policy in workers has it (the JS Self-Profiling
// spec only speaks of documents): a worker fetched over the network has
// its script's response's; a blob: or data: worker its creator's. The
// inspector does not name a worker's creator: for a blob: worker it is
// taken to be a frame of the blob URL's origin, for a data: worker any
// frame of the page, when those frames' policies agree; known is false
// otherwise.
func (a *agent) workerPolicy(url string) (allowed, known bool) {
	if rest, ok := strings.CutPrefix(url, "blob:"); ok {
		origin := rest
		if i := strings.Index(rest, "://"); i >= 0 {
			if j := strings.IndexByte(rest[i+3:], '/'); j >= 0 {
				origin = rest[:i+3+j]
			}
		}
		return a.agreed(func(p policy) bool { return strings.HasPrefix(p.url, origin+"/") || p.url == origin })
	}
	if strings.HasPrefix(url, "data:") {
		return a.agreed(func(policy) bool { return true })
	}
	allowed, known = a.scripts[withoutFragment(url)]
	return allowed, known
}

// agreed is the policy of the page's frames that match, when there are
// some and they agree.
func (a *agent) agreed(match func(policy) bool) (allowed, known bool) {
	for _, p := range a.policies {
		if !match(p) {
			continue
		}
		if known && p.allowed != allowed {
			return false, false
		}
		allowed, known = p.allowed, true
	}
	return allowed, known
}

// contextCreated tells a frame's new document its Document-Policy, when
// the frame's latest response is the document's.
func (a *agent) contextCreated(params json.RawMessage) {
	var p struct {
		Context struct {
			ID      int64  `json:"id"`
			Type    string `json:"type"`
			FrameID string `json:"frameId"`
		} `json:"context"`
	}
	if json.Unmarshal(params, &p) != nil || p.Context.Type != "normal" {
		return
	}
	pol, ok := a.policies[p.Context.FrameID]
	if !ok {
		return
	}
	u, _ := json.Marshal(withoutFragment(pol.url))
	expr := `location.href.split("#")[0] === ` + string(u) + ` && ` + polyfill.SetPolicyScript(pol.allowed)
	ctx, cancel := context.WithTimeout(context.Background(), armTimeout)
	defer cancel()
	a.conn.EvaluateIn(ctx, p.Context.ID, expr, nil) // a context gone meanwhile has no policy to learn
}
