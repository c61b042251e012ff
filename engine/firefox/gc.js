// Runs in Marionette's system sandbox, in the page's content process.
const reporters = Cc["@mozilla.org/memory-reporter-manager;1"].getService(Ci.nsIMemoryReporterManager);
function jsBytes() {
  const out = Array.from({length: 9}, () => ({}));
  reporters.sizeOfTab(window, ...out);
  return out[0].value + out[1].value + out[2].value; // objects, strings, other
}
const before = jsBytes();
Cu.forceGC();
Cu.forceCC();
Cu.forceGC();
return {url: window.location.href, before, after: jsBytes()};
