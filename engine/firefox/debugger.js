// Debugger.Memory in the page's content process, run in Marionette's
// system sandbox: arguments are the operation and its argument. The
// Debugger lives on Services (one per content process), so it outlives
// the sandbox and navigations within the process; a page in a new process
// (a cross-site navigation) starts with a fresh one, and the answer says
// so ("fresh").
const [op, arg] = arguments;
let st = Services.wdextDebugger;
const fresh = !st;
if (fresh) {
  const {addDebuggerToGlobal} = ChromeUtils.importESModule("resource://gre/modules/jsdebugger.sys.mjs");
  addDebuggerToGlobal(globalThis);
  const dbg = new Debugger();
  // The log is bounded by wdext's command, which drains it.
  dbg.memory.maxAllocationsLogLength = 1000000;
  // Globals made later in the process (a same-site navigation, a frame)
  // are debuggees too.
  dbg.onNewGlobalObject = g => { try { dbg.addDebuggee(g); } catch (e) {} };
  st = Services.wdextDebugger = {dbg, gcs: [], collecting: false};
}
const dbg = st.dbg;
const page = window.wrappedJSObject;
if (!dbg.hasDebuggee(page)) dbg.addDebuggee(page);
const mem = dbg.memory;

function frame(f) {
  return {functionDisplayName: f.functionDisplayName || "", source: f.source, sourceId: 0, line: f.line, column: f.column};
}
function stack(f) {
  const out = [];
  for (; f && out.length < 64; f = f.parent) out.push(frame(f));
  return out;
}
// plain makes a census JSON: SpiderMonkey's Maps (allocationStack,
// keyed by SavedFrame, null or "noStack") become wdext's []StackEntry.
function plain(v) {
  if (Object.prototype.toString.call(v) === "[object Map]") {
    const out = [];
    let none = null;
    for (const [k, c] of v) {
      if (k === "noStack") none = {stack: null, noStack: true, census: plain(c)};
      else out.push({stack: k ? stack(k) : [], census: plain(c)});
    }
    if (none) out.push(none);
    return out;
  }
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v)) o[k] = plain(v[k]);
    return o;
  }
  return v;
}
function drain() {
  const p = mem.allocationSamplingProbability;
  return mem.drainAllocationsLog().map(e => ({
    timestamp: e.timestamp,
    frame: e.frame ? frame(e.frame) : null,
    stack: stack(e.frame),
    class: e.class,
    constructor: e.constructor === undefined ? null : String(e.constructor),
    size: e.size,
    sampledBytes: Math.round(e.size / p),
    inNursery: e.inNursery,
  }));
}

switch (op) {
case "census":
  return {fresh, census: plain(arg ? mem.takeCensus({breakdown: arg}) : mem.takeCensus())};
case "track":
  mem.allocationSamplingProbability = arg;
  mem.trackingAllocationSites = true;
  mem.drainAllocationsLog();
  return {fresh, log: []};
case "drain": {
  if (!mem.trackingAllocationSites) {
    mem.allocationSamplingProbability = arg;
    mem.trackingAllocationSites = true;
    return {fresh: true, log: []};
  }
  const log = drain();
  mem.allocationSamplingProbability = arg;
  return {fresh, log};
}
case "untrack":
  mem.trackingAllocationSites = false;
  mem.drainAllocationsLog();
  return {fresh, log: []};
case "gclog":
  st.collecting = arg;
  st.gcs = [];
  mem.onGarbageCollection = arg ? stats => { st.gcs.push(stats); } : undefined;
  return {fresh, collecting: arg};
case "gcs":
  return {fresh, collecting: st.collecting, pid: Services.appinfo.processID, gcs: st.gcs.splice(0)};
}
throw new Error("unknown operation " + op);
