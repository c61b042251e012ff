// A dedicated worker with a Profiler: "start" makes one (answers typeof
// Profiler as the worker's first line saw it, or the constructor's error), "stop" answers the number of
// samples of its trace.
const atFirstLine = typeof Profiler; // "function" when the Profiler came before the worker's script
let profiler;
onmessage = async (e) => {
  if (e.data === "start") {
    try {
      profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 100 });
      postMessage([atFirstLine, String(self instanceof DedicatedWorkerGlobalScope)]);
    } catch (err) {
      postMessage([err.name]);
    }
  } else if (e.data === "stop") {
    const trace = await profiler.stop();
    postMessage(trace.samples.length);
  }
};
