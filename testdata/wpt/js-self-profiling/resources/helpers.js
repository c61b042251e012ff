// Helpers for the js-self-profiling tests. A forced sample lands in every
// started profiler; samples the browser takes by itself at construction
// and at stop() are told apart by time.
function startProfiler(options = {}) {
  return new Profiler(Object.assign({ sampleInterval: 10000, maxBufferSize: 1000 }, options));
}

// Samples between mark (a performance.now() value) and the call to stop().
async function stopAndCount(profiler, mark) {
  const end = performance.now();
  const trace = await profiler.stop();
  return trace.samples.filter((s) => s.timestamp > mark && s.timestamp <= end).length;
}

// Names of the frames on a sample's stack, innermost first.
function stackNames(trace, stackId) {
  const names = [];
  for (let s = trace.stacks[stackId]; s; s = s.parentId === undefined ? null : trace.stacks[s.parentId]) {
    names.push(trace.frames[s.frameId].name);
  }
  return names;
}
