// A dedicated worker with a Profiler: "start" makes one (answers typeof
// Profiler, or the constructor's error), "stop" answers the number of
// samples of its trace.
let profiler;
onmessage = async (e) => {
  if (e.data === "start") {
    try {
      profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 100 });
      postMessage([typeof Profiler, String(self instanceof DedicatedWorkerGlobalScope)]);
    } catch (err) {
      postMessage([err.name]);
    }
  } else if (e.data === "stop") {
    const trace = await profiler.stop();
    postMessage(trace.samples.length);
  }
};
