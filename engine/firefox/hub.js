// wdext's hub in Firefox's parent process, run once per browser in
// Marionette's chrome context: it holds the session's memory settings for
// every content process (sharedData "wdext:memory": initial, then what
// "wdext:memory" sets), loads process.js (processScript) into every content
// process, running or yet to start, and answers debugger.js's
// "wdext:ask" with the answers of every other content process than the
// asker's (or of one, by pid), and what processes that shut down had
// logged.
//
// workers is what process.js gives dedicated workers: the directory of
// worker.js (which Firefox's content sandbox lets content processes read:
// wdext's profile sets security.sandbox.content.read_path_whitelist),
// served as resource://wdext/, the Profiler polyfill, and the scripts that
// tell a realm its Document-Policy.
const [processScript, initial, workers] = arguments;
const ppmm = Services.ppmm;
if (!Services.wdextHub) {
  Services.wdextHub = true;
  const res = Services.io.getProtocolHandler("resource").QueryInterface(Ci.nsIResProtocolHandler);
  res.setSubstitution("wdext", Services.io.newURI("file://" + workers.dir + "/"));
  ppmm.sharedData.set("wdext:workers", {url: "resource://wdext/worker.js", polyfill: workers.polyfill, allowed: workers.allowed, denied: workers.denied});
  const asks = new Map();
  // kept: what processes that shut down handed over, newest last; a
  // drain or gcs ask takes its part.
  let kept = [];
  ppmm.sharedData.set("wdext:memory", initial);
  ppmm.sharedData.flush();
  ppmm.addMessageListener("wdext:memory", m => {
    ppmm.sharedData.set("wdext:memory", m.data);
    ppmm.sharedData.flush();
  });
  ppmm.addMessageListener("wdext:kept", m => {
    kept.push(m.data);
    if (kept.length > 32) kept.shift();
  });
  const finish = id => {
    const a = asks.get(id);
    asks.delete(id);
    try {
      a.from.sendAsyncMessage("wdext:answers", {id, answers: a.answers});
    } catch (e) {} // the asking process went away
  };
  ppmm.addMessageListener("wdext:ask", m => {
    const {id, op, arg, pid} = m.data;
    const a = {from: m.target, waiting: new Set(), answers: []};
    if (!pid && (op === "drain" || op === "gcs")) {
      for (const k of kept) {
        if (k[op]) a.answers.push(k[op]);
        k[op] = null;
      }
      kept = kept.filter(k => k.drain || k.gcs);
    }
    asks.set(id, a);
    for (let i = 0; i < ppmm.childCount; i++) {
      const mm = ppmm.getChildAt(i);
      if (mm.isInProcess || (pid ? mm.osPid !== pid : mm === m.target)) continue;
      a.waiting.add(mm);
      mm.sendAsyncMessage("wdext:op", {id, op, arg});
    }
    if (!a.waiting.size) finish(id);
  });
  ppmm.addMessageListener("wdext:answer", m => {
    const a = asks.get(m.data.id);
    if (a && a.waiting.delete(m.target)) {
      a.answers.push(m.data);
      if (!a.waiting.size) finish(m.data.id);
    }
  });
  // A process that goes away answers nothing.
  Services.obs.addObserver(mm => {
    for (const [id, a] of asks) {
      if (a.waiting.delete(mm) && !a.waiting.size) finish(id);
    }
  }, "message-manager-disconnect");
  ppmm.loadProcessScript("data:application/javascript;charset=utf-8," + encodeURIComponent(processScript), true);
}
return ppmm.childCount;
