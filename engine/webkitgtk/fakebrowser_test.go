package webkitgtk_test

import (
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// fakeBrowserEnv makes the test binary, started as a session's browser
// (webkitgtk:browserOptions binary os.Args[0]), a browser that fails:
// "silent" opens no port at all; "mute" opens its inspector's HTTP server,
// which lists a page, and an inspector server that never speaks, so
// WebKitWebDriver attached to it hangs in POST /session, as it does when a
// real browser fails to come up.
const fakeBrowserEnv = "WDEXT_FAKE_WEBKIT_BROWSER"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeBrowserEnv) {
	case "silent":
		time.Sleep(time.Hour)
		return
	case "mute":
		fakeBrowser()
		return
	}
	os.Exit(m.Run())
}

func fakeBrowser() {
	var ls []net.Listener
	for _, addr := range []string{os.Getenv("WEBKIT_INSPECTOR_HTTP_SERVER"), "127.0.0.1:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			os.Exit(3)
		}
		ls = append(ls, l)
	}
	// The inspector's HTTP server lists a page, as MiniBrowser's does; the
	// inspector server, where the driver attaches, never answers.
	go http.Serve(ls[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<input onclick="window.open('Main.html?ws=' + window.location.host + '/socket/1/1/WebPage')">`))
	}))
	for _, l := range ls[1:] {
		go func() { // lives as long as the fake browser
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close() // held open, never answered
			}
		}()
	}
	time.Sleep(time.Hour)
}
