#!/bin/sh
# Leak finder speed and memory versus memlab, in one run: takes a
# baseline/target/final set of ~25 MB heap snapshots and one of ≥ 200 MB
# snapshots from a leaking page in headless Chromium, runs
# `wdext leaks --baseline B --target T --final F --json` and
# `memlab find-leaks` on each set under /usr/bin/time -v, and prints wall
# time, peak RSS and the ratios (cmd/wdext/leaks_bench_test.go). memlab is
# installed outside the repository, in $MEMLAB_DIR (default /tmp/memlab).
# WDEXT_LEAKS_DIR keeps (and reuses) the snapshots; WDEXT_LEAKS_RUNS=3
# reports medians; WDEXT_MEMLAB_ARGS=--trace-all-objects makes memlab trace
# leaked JavaScript objects too, not only detached DOM.
set -eu
MEMLAB_DIR=${MEMLAB_DIR:-/tmp/memlab}
if [ ! -f "$MEMLAB_DIR/node_modules/@memlab/cli/bin/memlab.js" ]; then
	mkdir -p "$MEMLAB_DIR"
	(cd "$MEMLAB_DIR" && PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund memlab@2)
fi
cd "$(dirname "$0")/.."
WDEXT_MEMLAB="$MEMLAB_DIR" exec go test ./cmd/wdext -run TestLeaksVersusMemlab -count 1 -v -timeout 60m
