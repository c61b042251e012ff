#!/bin/sh
# Census speed and memory versus memlab, in one run: generates a ~21 MB and
# a ~223 MB heap snapshot, runs `wdext census` and memlab's heap parser on
# each under /usr/bin/time -v, and prints MB/s, peak RSS and the ratios,
# with the load average and the ratio of CPU times as a check on a loaded
# machine (memory/debuggermemory/bench_test.go; targets: ≥ 10× memlab at
# both sizes, peak RSS ≤ 1.5× the file). memlab is installed outside the
# repository, in $MEMLAB_DIR (default /tmp/memlab).
set -eu
MEMLAB_DIR=${MEMLAB_DIR:-/tmp/memlab}
if [ ! -d "$MEMLAB_DIR/node_modules/@memlab/heap-analysis" ]; then
	mkdir -p "$MEMLAB_DIR"
	(cd "$MEMLAB_DIR" && PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund memlab@2)
fi
cd "$(dirname "$0")/.."
WDEXT_MEMLAB="$MEMLAB_DIR" exec go test ./memory/debuggermemory -run TestCensusVersusMemlab -count 1 -v -timeout 30m
