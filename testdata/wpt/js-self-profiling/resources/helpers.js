// Helpers for the js-self-profiling tests. A forced sample lands in every
// started profiler; samples the browser takes by itself at construction
// and at stop() are told apart by time. Clocks are coarse (1 ms in
// WebKitGTK, 100 µs in Chromium), so marks are taken only once the clock
// has moved past everything before them. The interval is 10 minutes:
// a periodic sample would land in a span of a test that a loaded machine
// slowed past a shorter one.
function startProfiler(options = {}) {
  return new Profiler(Object.assign({ sampleInterval: 600000, maxBufferSize: 1000 }, options));
}

// nextMark returns a performance.now() value later than any sample taken
// before the call. It waits synchronously, for one clock tick at most, so
// that nothing else runs meanwhile: a sample the browser takes as it calls
// back into the page (every callback samples in Chromium's stack-samples
// mode) is taken before the call, never at the mark's own tick.
function nextMark() {
  const before = performance.now();
  let mark;
  while ((mark = performance.now()) <= before);
  return mark;
}

// Samples from mark (from nextMark) up to the call to stop().
async function stopAndCount(profiler, mark) {
  const end = nextMark();
  const trace = await profiler.stop();
  return trace.samples.filter((s) => s.timestamp >= mark && s.timestamp < end).length;
}

// Names of the frames on a sample's stack, innermost first.
function stackNames(trace, stackId) {
  const names = [];
  for (let s = trace.stacks[stackId]; s; s = s.parentId === undefined ? null : trace.stacks[s.parentId]) {
    names.push(trace.frames[s.frameId].name);
  }
  return names;
}
