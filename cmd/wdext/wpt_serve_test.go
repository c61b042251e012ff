package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/wdext/wdext/engine/chromium"
)

// wdext wpt serve serves the tree as a run does (WPT's host names, two
// ports per scheme, HTTPS with this run's CA, the runner's own files),
// prints the URLs and how to start Chromium on them, and exits 0 on
// SIGTERM.
func TestWPTServe(t *testing.T) {
	root := writeTree(t, map[string]string{
		"resources/testharness.js": "// the tree's own\n",
		"dir/a.html":               "<p>a</p>",
		"dir/b.sub.html":           "{{host}} {{ports[https][1]}}",
	})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	cmd := exec.Command(wdextBinary(t), "wpt", "serve", "--wpt-root", root, "--ca-file", caFile, "dir/a.html")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())
	exited := make(chan error, 1)
	ready := make(chan string, 1)                                         // what it printed, up to "Serving until"
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }) // a safety net
	go func() {                                                           // owned by the test: ends when wdext exits (SIGTERM, or the cleanup's SIGKILL)
		var out strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "Serving until") {
				ready <- out.String()
			}
		}
		select {
		case ready <- out.String():
		default:
		}
		exited <- cmd.Wait()
	}()
	printed := <-ready
	t.Logf("wdext wpt serve printed:\n%s", printed)
	assert.Assert(t, strings.Contains(printed, "Serving until SIGINT or SIGTERM"), "%s\n%s", printed, errOut.String())

	httpURL := regexp.MustCompile(`http://web-platform\.test:\d+/dir/a\.html`).FindString(printed)
	httpsURL := regexp.MustCompile(`https://web-platform\.test:\d+`).FindString(printed)
	assert.Assert(t, httpURL != "" && httpsURL != "", printed)
	client := wptClient(t, caFile)
	assert.Equal(t, get(t, client, httpURL), "<p>a</p>")
	assert.Equal(t, get(t, client, httpsURL+"/dir/a.html"), "<p>a</p>")
	assert.Assert(t, regexp.MustCompile(`^web-platform\.test \d+$`).MatchString(get(t, client, httpsURL+"/dir/b.sub.html")))
	assert.Equal(t, get(t, client, httpsURL+"/resources/testharness.js"), "// the tree's own\n")
	assert.Assert(t, strings.Contains(get(t, client, httpsURL+"/resources/testharnessreport.js"), "wdext's testharnessreport.js"))

	// The Chromium line: WPT's resolver rules, this run's key and a
	// profile of its own.
	resp, err := client.Get(httpsURL + "/dir/a.html")
	assert.NilError(t, err)
	resp.Body.Close()
	sum := sha256.Sum256(resp.TLS.PeerCertificates[0].RawSubjectPublicKeyInfo)
	spki := base64.StdEncoding.EncodeToString(sum[:])
	for _, want := range []string{
		"chromium: chromium --user-data-dir=\"$(mktemp -d)\" ",
		"'--host-resolver-rules=" + chromium.HostResolverRules + "'",
		"--ignore-certificate-errors-spki-list=" + spki + " " + httpURL + "\n",
		"webkitgtk: cannot be told to resolve WPT's host names",
	} {
		assert.Assert(t, strings.Contains(printed, want), "no %q in:\n%s", want, printed)
	}

	assert.NilError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NilError(t, <-exited, errOut.String())
	assert.Assert(t, strings.Contains(errOut.String(), "wdext wpt serve: stopping"), errOut.String())
}

// wptClient reaches WPT's host names on loopback and trusts the CA in
// caFile.
func wptClient(t *testing.T, caFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	assert.NilError(t, err)
	pool := x509.NewCertPool()
	assert.Assert(t, pool.AppendCertsFromPEM(pem))
	dialer := &net.Dialer{}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
	}}
}

func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	assert.NilError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	assert.Equal(t, resp.StatusCode, 200, "%s: %s", url, b)
	return string(b)
}

// writeTree creates files (slash-separated names) under a temporary root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return root
}
