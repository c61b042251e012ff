package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/tebeka/selenium"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/wpt"
)

// serverOptions configure the wptserve emulation for a run on kind k's
// browser, as wptserve and wptrunner arrange it: two HTTP and two HTTPS
// ports (WPT's /common/get-host-info.sub.js needs {{ports[http][1]}} and
// the HTTPS origins), and WPT's own host names (web-platform.test, www1.…)
// when the browser can be told to resolve them to loopback, else the
// loopback names (see package wpt, "Hosts and ports").
func serverOptions(k kind.Kind) wpt.Options {
	o := wpt.Options{WPTHosts: k.WPT.Hosts, SecondPort: true, HTTPS: true, Document: k.WPT.Document}
	if !k.WPT.Hosts {
		o.MainHost = "localhost"
	}
	return o
}

// sessionCapabilities are what the runner's sessions ask kind k for, to
// run the tests srv (started, or nil) serves, and the product they are
// expected to be (productOf settles it from the browser's answer).
func sessionCapabilities(k kind.Kind, experimental bool, srv *wpt.Server) (caps selenium.Capabilities, product string) {
	return k.WPT.Capabilities(servedBy(srv, experimental)), k.WPT.Product
}

// servedBy is what a kind's WPT capabilities depend on of srv (started, or
// nil).
func servedBy(srv *wpt.Server, experimental bool) kind.Served {
	s := kind.Served{Experimental: experimental}
	if srv != nil {
		s.Hosts, s.HostNames, s.SPKIHash = srv.WPTHosts(), srv.HostNames(), srv.SPKIHash()
	}
	return s
}

// productOf is the wptrunner-style product of the browser that answered:
// what was asked for, unless an --upstream browser says otherwise.
func productOf(asked string, f *driverFlags, returned map[string]any) string {
	if f.managed() {
		return asked
	}
	name, _ := returned["browserName"].(string)
	if name == "" {
		return asked
	}
	if k, ok := f.kinds.Recognise(name); ok {
		return k.WPT.Product
	}
	return strings.ToLower(name)
}

// defaultExpectations are the root's expectations-PRODUCT.json, else its
// expectations.json, else none; in a --stack-samples run,
// expectations-PRODUCT-stack-samples.json comes first.
func defaultExpectations(root, product string, stackSamples bool) (wpt.Expectations, string, error) {
	names := []string{"expectations-" + product + ".json", "expectations.json"}
	if stackSamples {
		names = slices.Insert(names, 0, "expectations-"+product+"-stack-samples.json")
	}
	for _, name := range names {
		p := filepath.Join(root, name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		exp, err := wpt.LoadExpectations(p)
		if err != nil {
			return nil, "", err
		}
		return exp, p + " (found at the root; --expected to choose another, --expected '' for none)", nil
	}
	return nil, "", nil
}

// runInfo is the report's run_info, with wptrunner's keys where they
// apply (product, browser_version, os, os_version, processor, bits,
// headless, which the kind adds) and the flags that change what tests
// see.
func runInfo(product string, returned map[string]any, f *wptFlags, ownHarness bool) map[string]any {
	info := map[string]any{
		"product":             product,
		"browser_version":     returned["browserVersion"],
		"os":                  runtime.GOOS,
		"os_version":          osVersion(),
		"processor":           processor(),
		"bits":                strconv.IntSize,
		"wdext":               strings.TrimSpace(strings.TrimPrefix(version(), "wdext ")),
		"timeout_multiplier":  f.multiplier,
		"enable_experimental": f.experimental,
		"stack_samples":       f.stackSamples,
	}
	if name, ok := returned["browserName"]; ok {
		info["browser"] = name
	}
	if f.driver.managed() {
		info["engine"] = f.driver.engine
	} else {
		info["upstream"] = true
	}
	switch {
	case f.harness != "":
		info["testharness"] = f.harness
	case ownHarness:
		info["testharness"] = "the tree's own"
	default:
		info["testharness"] = wpt.HarnessPackage
	}
	return info
}

// osVersion is the distribution's version (/etc/os-release VERSION_ID, as
// mozinfo reports it), else the kernel's release.
func osVersion() string {
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VERSION_ID="); ok {
				return strings.Trim(v, `"'`)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}

// processor is GOARCH as mozinfo names it.
func processor() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "386":
		return "x86"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}
