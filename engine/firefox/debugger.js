// Debugger.Memory in the page's content process, run in Marionette's
// system sandbox: arguments are the operation and its argument. The
// Debugger lives on Services (one per content process), so it outlives
// the sandbox and navigations within the process; a page in a new process
// (a cross-site navigation) starts with a fresh one, and the answer says
// so ("fresh"). The answer is a JSON string: Marionette clones a result
// object member by member, which takes minutes for a log of 600,000
// entries (measured), and a string at once.
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

// SavedFrames are shared between the stacks that share them: each is
// read once (a read crosses compartments, and a log has many entries of
// few stacks).
const frames = new Map();
const stacks = new Map();
function frame(f) {
  let out = frames.get(f);
  if (!out) {
    out = {functionDisplayName: f.functionDisplayName || "", source: f.source, sourceId: 0, line: f.line, column: f.column};
    frames.set(f, out);
  }
  return out;
}
function stack(f) {
  if (!f) return [];
  let out = stacks.get(f);
  if (!out) {
    out = [];
    for (let g = f; g && out.length < 64; g = g.parent) out.push(frame(g));
    stacks.set(f, out);
  }
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
// drain answers the log compactly, by columns: each stack once in
// "stacks", and per entry its timestamp, stack index (-1: none), class,
// size and inNursery. (SpiderMonkey's entries carry no constructor.)
function drain() {
  const index = new Map();
  const out = {stacks: [], timestamp: [], stack: [], class: [], size: [], inNursery: []};
  for (const e of mem.drainAllocationsLog()) {
    let i = -1;
    if (e.frame) {
      i = index.get(e.frame);
      if (i === undefined) {
        i = out.stacks.length;
        index.set(e.frame, i);
        out.stacks.push(stack(e.frame));
      }
    }
    out.timestamp.push(e.timestamp);
    out.stack.push(i);
    out.class.push(e.class);
    out.size.push(e.size);
    out.inNursery.push(e.inNursery);
  }
  return out;
}

function run() {
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
    return {fresh: true};
  }
  const log = drain();
  mem.allocationSamplingProbability = arg;
  return {fresh, ...log};
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
}
return JSON.stringify(run());
