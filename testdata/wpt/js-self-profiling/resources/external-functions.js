// Functions defined in an external script: their frames name this file.
function externalStart() {
  return new Profiler({ sampleInterval: 10000, maxBufferSize: 100 });
}
