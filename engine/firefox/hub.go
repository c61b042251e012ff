package firefox

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"

	"github.com/wdext/wdext/polyfill"
)

var (
	//go:embed hub.js
	hubScript string
	//go:embed process.js
	processScript string
	//go:embed worker.js
	workerScript string
)

// workerSetup is what hub.js hands process.js for dedicated workers.
type workerSetup struct {
	Dir      string `json:"dir"` // where worker.js is
	Polyfill string `json:"polyfill"`
	Allowed  string `json:"allowed"` // SetPolicyScript(true)
	Denied   string `json:"denied"`  // SetPolicyScript(false)
}

// workerDir is the directory, in the browser's group directory, that
// holds worker.js; the profile lets content processes read it.
const workerDir = "wdext"

// forceWorkerScript forces a sample in a worker's realm (a script, not a
// function body).
var forceWorkerScript = "(() => {" + polyfill.ForceSampleScript + "})()"

// startSettings are a session's memory settings at its start: no
// allocation tracking, no GC log.
var startSettings = settings{P: 1}

// installHub puts wdext's hub in Firefox's parent process and its
// Debugger in every content process, running or yet to start (hub.js,
// process.js), by Marionette's chrome context, which Firefox allows with
// -remote-allow-system-access. It runs before the client has the session,
// so no client command meets the chrome context. It says whether the
// hub's Gecko profiler runs, which gives the Profiler polyfill its
// periodic samples.
func installHub(ctx context.Context, b *browser) (profiling bool, err error) {
	c := b.conn
	if err := c.Send(ctx, "Marionette:SetContext", map[string]any{"value": "chrome"}, nil); err != nil {
		return false, fmt.Errorf("the chrome context of Marionette: %w", err)
	}
	workers := workerSetup{
		Dir:      filepath.Join(b.group.Dir(), workerDir),
		Polyfill: polyfill.Script("Profiler"),
		Allowed:  polyfill.SetPolicyScript(true),
		Denied:   polyfill.SetPolicyScript(false),
	}
	var reply struct {
		Value bool `json:"value"`
	}
	err = c.Send(ctx, "WebDriver:ExecuteScript", map[string]any{"script": hubScript, "args": []any{processScript, startSettings, workers}}, &reply)
	if err2 := c.Send(ctx, "Marionette:SetContext", map[string]any{"value": "content"}, nil); err == nil {
		err = err2
	}
	if err != nil {
		return false, fmt.Errorf("wdext's Debugger in Firefox's processes: %w", err)
	}
	return reply.Value, nil
}
