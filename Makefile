# The two commands of the README:
#   make run    the bundled WPT-style suite through wdext, in front of a
#               chromedriver it starts itself (reports in out/)
#   make test   the checks (gofmt, vet, staticcheck), the unit tests under
#               the race detector, then every test against real Chromium,
#               WebKitGTK (WebKitWebDriver + MiniBrowser on an Xvfb
#               display wdext starts) and Firefox (through Marionette)
# and: make serve   wdext on :4444 for your own clients
GO ?= go

.PHONY: deps run serve test check race bench

deps:
	./scripts/deps.sh

run: deps
	mkdir -p out
	$(GO) run ./cmd/wdext wpt testdata/wpt \
		--report out/wptreport.json --junit out/junit.xml

serve: deps
	$(GO) run ./cmd/wdext serve --port 4444

test: deps check race
	WDEXT_REQUIRE_BROWSER=1 $(GO) test -p 2 -count=1 -timeout 20m ./...

# The unit tests under the race detector: -short skips every test that
# needs a browser (internal/e2e), which run once, without it, in make test.
race:
	$(GO) test -race -short -count=1 -timeout 10m ./...

check:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

bench: deps
	$(GO) test -run XXX -bench ForceSample -benchtime 1000x ./forcesample/
	$(GO) test -run XXX -bench ExecuteSync -benchtime 2000x ./webdriver/
	$(GO) test -run XXX -bench ProfilingSuite -benchtime 1x ./wpt/
