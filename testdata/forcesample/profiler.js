// Test helper shared by the forcesample pages: one Profiler per document,
// and a count of the samples taken between a mark and the call to stop(),
// so samples the browser takes by itself at construction (1–2 in
// Chromium) and at stop() (sometimes 1) do not count.
// The default interval, 10 minutes, keeps timer samples out of a test
// that a loaded machine slows past 10 s. ?interval=MS&buffer=N override
// the defaults (the benchmark needs a buffer for 1,000 samples).
const probeParams = new URLSearchParams(location.search);
window.probe = {
  start(sampleInterval = +(probeParams.get("interval") || 600000), maxBufferSize = +(probeParams.get("buffer") || 1000)) {
    this.profiler = new Profiler({ sampleInterval, maxBufferSize });
  },
  mark() {
    this.t0 = performance.now();
  },
  async count() {
    // The clock is coarse (100 µs here): wait until it has moved past every
    // sample so far, so that the one stop() may take does not count.
    const now = performance.now();
    let end;
    while ((end = performance.now()) <= now) await new Promise((resolve) => setTimeout(resolve, 1));
    const trace = await this.profiler.stop();
    return trace.samples.filter((s) => s.timestamp > this.t0 && s.timestamp < end).length;
  },
};
