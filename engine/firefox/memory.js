// The page's memory as Firefox's memory reporters tell it, run in
// Marionette's system sandbox in the page's content process: "measure"
// answers the tab's JavaScript bytes, "gc" collects garbage (Cu.forceGC,
// forceCC, forceGC) and answers them before and after.
const [op] = arguments;
const reporters = Cc["@mozilla.org/memory-reporter-manager;1"].getService(Ci.nsIMemoryReporterManager);
function jsBytes() {
  const out = Array.from({length: 9}, () => ({}));
  reporters.sizeOfTab(window, ...out);
  return out[0].value + out[1].value + out[2].value; // objects, strings, other
}
const page = {url: window.location.href, origin: window.location.origin};
if (op === "measure") return {...page, after: jsBytes()};
const before = jsBytes();
Cu.forceGC();
Cu.forceCC();
Cu.forceGC();
return {...page, before, after: jsBytes()};
