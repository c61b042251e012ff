package webkitgtk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/webkitgtk/wkinspector"
)

// BrowserPaths are where Debian's libwebkit2gtk packages put MiniBrowser,
// newest API first.
var BrowserPaths = []string{
	"/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
	"/usr/lib/x86_64-linux-gnu/webkitgtk-6.0/MiniBrowser",
	"/usr/lib/x86_64-linux-gnu/webkit2gtk-4.0/MiniBrowser",
	"/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
}

// FindBrowser returns explicit if set, else the first of BrowserPaths that
// exists.
func FindBrowser(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	for _, p := range BrowserPaths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("MiniBrowser not found: install libwebkit2gtk-4.1-0")
}

// browserOptionsCap is WebKitGTK's vendor capability naming the browser
// binary and its arguments.
const browserOptionsCap = "webkitgtk:browserOptions"

// launch is how a session's browser is started.
type launch struct {
	binary string
	args   []string
}

// takeBrowserOptions removes "binary" and "args" from alwaysMatch's
// webkitgtk:browserOptions, which wdext now honours by starting the
// browser itself, and returns them. The driver, attached with --target,
// would ignore them. Other browserOptions members (certificates) stay.
func takeBrowserOptions(req map[string]any) (launch, error) {
	var l launch
	caps, _ := req["capabilities"].(map[string]any)
	always, _ := caps["alwaysMatch"].(map[string]any)
	opts, _ := always[browserOptionsCap].(map[string]any)
	if opts == nil {
		return l, nil
	}
	if b, ok := opts["binary"]; ok {
		s, isString := b.(string)
		if !isString {
			return l, fmt.Errorf("%s.binary must be a string", browserOptionsCap)
		}
		l.binary = s
		delete(opts, "binary")
	}
	if a, ok := opts["args"]; ok {
		list, isList := a.([]any)
		if !isList {
			return l, fmt.Errorf("%s.args must be an array of strings", browserOptionsCap)
		}
		for _, v := range list {
			s, isString := v.(string)
			if !isString {
				return l, fmt.Errorf("%s.args must be an array of strings", browserOptionsCap)
			}
			l.args = append(l.args, s)
		}
		delete(opts, "args")
	}
	return l, nil
}

// browser is a MiniBrowser wdext started in automation mode, with its
// remote inspector served over HTTP.
type browser struct {
	*proc
	// automation is where WebKitWebDriver attaches (--target): the
	// browser's inspector server.
	automation string
	// inspector is the client of the inspector's HTTP server
	// (WEBKIT_INSPECTOR_HTTP_SERVER): its target list and a WebSocket per
	// target. The browser's proc owns it.
	inspector *wkinspector.Browser
	// pages are the page targets the inspector listed at start.
	pages []int
	// agents keep the pages ready for the polyfill (nil without one).
	agents *agents
}

// startBrowser starts the browser on display with both servers on
// loopback.
//
// With WEBKIT_INSPECTOR_HTTP_SERVER set, WebKitGTK 2.50 ignores
// WEBKIT_INSPECTOR_SERVER (measured: set to a free port, nothing listened
// there) and puts its inspector server, which automation needs too, on a
// port of its own choosing: that port is read from the process's listening
// sockets.
func (u *Upstream) startBrowser(ctx context.Context, display string, l launch, timeout time.Duration) (*browser, error) {
	path, err := FindBrowser(l.binary)
	if err != nil {
		return nil, err
	}
	httpPort, err := driver.FreePort()
	if err != nil {
		return nil, err
	}
	inspector := net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort))
	// Without the back/forward cache: with it, the workers of a document
	// navigated away from stay in the inspector's Worker domain,
	// suspended, and never answer (measured). The client's own arguments
	// come after, and so win.
	cmd := exec.Command(path, append([]string{"--automation", "--enable-page-cache=false"}, l.args...)...)
	cmd.Env = append(os.Environ(),
		"DISPLAY="+display,
		"WEBKIT_INSPECTOR_HTTP_SERVER="+inspector,
		"GTK_OVERLAY_SCROLLING=1", // as WebKitWebDriver sets it for the browsers it starts
	)
	p, err := u.startProc(cmd)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		ports, err := listeningPorts(p.group.Pid())
		if err == nil && ports[httpPort] && len(ports) == 2 {
			// The target list is read once, before the driver attaches:
			// it shows the browser's first page, and the automation
			// session takes the next target number (measured: the list
			// is not updated afterwards, and windows opened later take
			// the numbers after it).
			conn, targets, lerr := wkinspector.Listing(ctx, inspector)
			if lerr == nil && len(targets) > 0 {
				delete(ports, httpPort)
				for port := range ports {
					// The automation session's target is the number after
					// the first page's: never opened (see wkinspector).
					client := wkinspector.NewBrowser(inspector, conn, slices.Max(targets)+1)
					p.client = client
					var as *agents
					if u.Inject != "" {
						as = newAgents(u.Inject, u.logger())
						client.OnPrepared(as.add)
					}
					return &browser{proc: p, automation: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), pages: targets, inspector: client, agents: as}, nil
				}
			}
			err = lerr
		}
		if err == nil && len(ports) > 2 {
			p.kill()
			return nil, fmt.Errorf("%s listens on %d ports, expected its inspector's HTTP server (%d) and inspector server", filepath.Base(path), len(ports), httpPort)
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited before its inspector server listened: %s", filepath.Base(path), p.why())
		case <-ctx.Done():
			p.kill()
			return nil, fmt.Errorf("%s did not open its inspector within %v (listening on ports %v; %v): %s", filepath.Base(path), timeout, slices.Sorted(maps.Keys(ports)), err, p.why())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// listeningPorts returns the TCP ports process pid listens on, from
// /proc: the sockets among its file descriptors that /proc/net/tcp lists
// in state LISTEN.
func listeningPorts(pid int) (map[int]bool, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/fd/" + fd.Name())
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	ports := map[int]bool{}
	for _, table := range []string{"/net/tcp", "/net/tcp6"} {
		f, err := os.Open(dir + table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if port, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil {
				ports[int(port)] = true
			}
		}
		f.Close()
	}
	return ports, nil
}
