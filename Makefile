# The two commands of the README:
#   make run    wdext on :4444 in front of a chromedriver it starts itself
#   make test   vet and every test, against real Chromium
GO ?= go

.PHONY: deps run test check bench

deps:
	./scripts/deps.sh

run: deps
	$(GO) run ./cmd/wdext serve --port 4444

test: deps
	$(GO) vet ./...
	WDEXT_REQUIRE_BROWSER=1 $(GO) test -p 2 -timeout 20m ./...

check:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./...

bench: deps
	$(GO) test -run XXX -bench . -benchtime 1000x ./forcesample/ ./webdriver/
