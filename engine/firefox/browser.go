package firefox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine/firefox/marionette"
	"github.com/wdext/wdext/internal/procgroup"
)

// Find returns explicit if set, else firefox-esr, then firefox, from
// $PATH or /usr/bin.
func Find(explicit string) (string, error) {
	p, err := driver.Find(explicit, "firefox-esr", "")
	if err == nil {
		return p, nil
	}
	return driver.Find("", "firefox", "pass --firefox, put firefox-esr on $PATH, or install firefox-esr")
}

// prefs are what every profile wdext makes starts with: Marionette on a
// port of Firefox's choosing (written to MarionetteActivePort), and a
// browser that neither phones home nor shows first-run pages, as
// geckodriver's and wptrunner's profiles do. The client's
// moz:firefoxOptions prefs come after, and win.
var prefs = map[string]any{
	"marionette.port":                            0,
	"browser.shell.checkDefaultBrowser":          false,
	"browser.startup.homepage_override.mstone":   "ignore",
	"browser.aboutwelcome.enabled":               false,
	"datareporting.policy.dataSubmissionEnabled": false,
	"toolkit.telemetry.reportingpolicy.firstRun": false,
	"app.update.disabledForTesting":              true,
	"browser.safebrowsing.malware.enabled":       false,
	"browser.safebrowsing.phishing.enabled":      false,
	"network.captive-portal-service.enabled":     false,
	"extensions.update.enabled":                  false,
	"browser.tabs.warnOnClose":                   false,
	"dom.disable_open_during_load":               false,
}

// browser is one Firefox wdext started, and its Marionette connection.
type browser struct {
	group *procgroup.Group
	conn  *marionette.Conn
}

// launchProfile is the shell step that makes the profile in the group's
// own directory (its TMPDIR) (removed with the group, swept after a wdext killed
// outright) before Firefox starts on it: user.js comes in
// WDEXT_FIREFOX_USERJS, and worker.js (workerDir) in WDEXT_FIREFOX_WORKER;
// the last pref lets content processes read workerDir, through their
// sandbox.
const launchProfile = `cd "$TMPDIR" && mkdir profile ` + workerDir + ` && printf '%s' "$WDEXT_FIREFOX_USERJS" >profile/user.js && ` +
	`printf 'user_pref("security.sandbox.content.read_path_whitelist", "%s/` + workerDir + `/");\n' "$PWD" >>profile/user.js && ` +
	`printf '%s' "$WDEXT_FIREFOX_WORKER" >` + workerDir + `/worker.js && unset WDEXT_FIREFOX_USERJS WDEXT_FIREFOX_WORKER && exec "$0" "$@"`

// startBrowser starts Firefox headless on a fresh profile with options o,
// and connects to its Marionette; start bounds the whole.
func startBrowser(ctx context.Context, o options, start time.Duration, stderr io.Writer) (*browser, error) {
	ctx, cancel := context.WithTimeout(ctx, start)
	defer cancel()
	args := []string{"-c", launchProfile, o.binary, "-marionette", "-remote-allow-system-access", "-remote-debugging-port", "0", "-profile", "profile", "-no-remote"}
	if !hasArg(o.args, "headless") {
		args = append(args, "-headless")
	}
	args = append(args, o.args...)
	args = append(args, "about:blank")
	cmd := exec.Command("/bin/sh", args...)
	cmd.Env = append(os.Environ(), "MOZ_HEADLESS=1", "WDEXT_FIREFOX_USERJS="+userJS(o.prefs), "WDEXT_FIREFOX_WORKER="+workerScript)
	for k, v := range o.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	g, err := procgroup.Start(cmd)
	if err != nil {
		return nil, err
	}
	addr, err := marionettePort(ctx, g)
	if err == nil {
		var c *marionette.Conn
		if c, err = marionette.Dial(ctx, addr); err == nil {
			return &browser{group: g, conn: c}, nil
		}
	}
	g.Kill()
	return nil, fmt.Errorf("starting %s: %w", o.binary, err)
}

// marionettePort waits for Firefox to write the port Marionette listens
// on into the profile.
func marionettePort(ctx context.Context, g *procgroup.Group) (string, error) {
	file := filepath.Join(g.Dir(), "profile", "MarionetteActivePort")
	for {
		if b, err := os.ReadFile(file); err == nil {
			if port, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && port > 0 {
				return "127.0.0.1:" + strconv.Itoa(port), nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("marionette did not start: %w", ctx.Err())
		case <-g.Exited():
			return "", fmt.Errorf("firefox exited before marionette listened")
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// userJS writes the profile's prefs: wdext's, then the client's.
func userJS(client map[string]any) string {
	all := maps.Clone(prefs)
	maps.Copy(all, client)
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(all)) {
		name, _ := json.Marshal(k)
		value, _ := json.Marshal(all[k])
		fmt.Fprintf(&b, "user_pref(%s, %s);\n", name, value)
	}
	return b.String()
}

// hasArg reports whether args has the switch name, as -name or --name.
func hasArg(args []string, name string) bool {
	for _, a := range args {
		if strings.TrimLeft(a, "-") == name {
			return true
		}
	}
	return false
}

// kill ends the browser and its connection, and returns once every
// process is gone.
func (b *browser) kill() {
	b.conn.Close()
	b.group.Kill()
}
