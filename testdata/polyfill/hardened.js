// Runs while hardened.html parses: the polyfill must be there already.
window.early = typeof Profiler;
