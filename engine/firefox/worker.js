// wdext in one dedicated worker: the worker's debugger script (its
// WorkerDebugger's, which process.js initializes from this file while
// Firefox holds the worker before its first line). Messages from
// process.js are JSON {id, script}: the script runs in the worker's global,
// and the answer is {id, value}, {id, error} or {id, closed} (the worker
// is terminating). The first message puts the
// Profiler polyfill in; the worker runs once it is answered.
const dbg = new Debugger();
const worker = dbg.addDebuggee(global);
addEventListener("message", (e) => {
  const {id, script} = JSON.parse(e.data);
  const out = {id};
  const r = worker.executeInGlobal(script);
  if (!r) out.closed = true; // the worker is terminating
  else if ("return" in r) out.value = typeof r.return === "object" ? null : r.return;
  else out.error = String(r.throw && r.throw.unsafeDereference ? r.throw.unsafeDereference() : r.throw);
  postMessage(JSON.stringify(out));
});
