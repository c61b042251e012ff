# The two commands of the README:
#   make run    the bundled WPT-style suite through wdext, in front of a
#               chromedriver it starts itself (reports in out/)
#   make test   vet and every test, against real Chromium
# and: make serve   wdext on :4444 for your own clients
GO ?= go

.PHONY: deps run serve test check bench

deps:
	./scripts/deps.sh

run: deps
	mkdir -p out
	$(GO) run ./cmd/wdext wpt --expected testdata/wpt/expectations.json \
		--report out/wptreport.json --junit out/junit.xml testdata/wpt

serve: deps
	$(GO) run ./cmd/wdext serve --port 4444

test: deps
	$(GO) vet ./...
	WDEXT_REQUIRE_BROWSER=1 $(GO) test -p 2 -count=1 -timeout 20m ./...

check:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./...

bench: deps
	$(GO) test -run XXX -bench ForceSample -benchtime 1000x ./forcesample/
	$(GO) test -run XXX -bench ExecuteSync -benchtime 2000x ./webdriver/
	$(GO) test -run XXX -bench ProfilingSuite -benchtime 1x ./wpt/
