// Line and column numbers are checked by the polyfill tests: keep them.
function outer() {
  return inner();
}
function inner() {
  return globalThis[Symbol.for("wdext.profiler.forceSampleHere")]();
}
