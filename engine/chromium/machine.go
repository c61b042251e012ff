package chromium

import (
	"os"
	"os/exec"
)

// ClosedNetworkArgs keep a headless Chromium from reaching for Google's
// services, whose connections a closed network refuses (slowly, and many
// at a time).
var ClosedNetworkArgs = []string{
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
}

// allocationSiteJSFlags keep the leak check's createdFrom. V8's
// allocation tracker moves an object's allocation stack with the object
// only while the object has no heap-object id, and the tracker's 50 ms
// updates give every live object one, so an old-space compaction loses
// the stacks of the objects it moves. Chromedriver's element commands led
// to one in every run measured (docs/leaks-createdfrom-2026-12-02.md).
// --no-compact keeps objects where they were allocated.
var allocationSiteJSFlags = []string{"--no-compact"}

// ManagedDefaults says what wdext adds to a new session under a managed
// chromedriver: the browser binary found here (empty if none); switches —
// --headless=new plus ClosedNetworkArgs when there is no display,
// --no-sandbox when running as root (Chromium refuses otherwise); and
// allocationSiteJSFlags.
func ManagedDefaults() Defaults {
	binary, args := machine()
	return Defaults{Binary: binary, Args: args, JSFlags: allocationSiteJSFlags}
}

// machine is the browser binary found here and the switches this machine
// needs.
func machine() (binary string, args []string) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			binary = p
			break
		}
	}
	if binary == "" {
		if _, err := os.Stat("/usr/bin/chromium"); err == nil {
			binary = "/usr/bin/chromium"
		}
	}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		args = append(args, "--headless=new")
		args = append(args, ClosedNetworkArgs...)
	}
	return binary, args
}
