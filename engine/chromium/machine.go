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

// MachineDefaults says what this machine needs to run Chromium under
// a managed chromedriver: the browser binary found here (empty if none),
// and switches — --headless=new plus ClosedNetworkArgs when there is no
// display, --no-sandbox when running as root (Chromium refuses otherwise).
func MachineDefaults() (binary string, args []string) {
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
