// wdext's hub in Firefox's parent process, run once per browser in
// Marionette's chrome context: it holds the session's memory settings for
// every content process (sharedData "wdext:memory": initial, then what
// "wdext:memory" sets), loads process.js (processScript) into every content
// process, running or yet to start, and answers debugger.js's questions
// ("wdext:ask", then "wdext:answered") with the answers of every content
// process (or of one, by pid), and what processes that shut down had
// logged. The reply stays in the hub until collected, so any content
// process can collect it (the page may have moved meanwhile).
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
  res.setSubstitution("wdext", Services.io.newURI(PathUtils.toFileURI(workers.dir) + "/"));
  ppmm.sharedData.set("wdext:workers", {url: "resource://wdext/worker.js", polyfill: workers.polyfill, allowed: workers.allowed, denied: workers.denied});
  // asks are the questions being answered, by id; replies the answered
  // ones, until debugger.js collects them ("wdext:answered") or a minute
  // has passed.
  const asks = new Map();
  const replies = new Map();
  // kept: what processes that shut down handed over, newest last; a
  // drain or gcs question takes its part.
  let kept = [];
  ppmm.sharedData.set("wdext:memory", initial);
  ppmm.sharedData.flush();
  ppmm.addMessageListener("wdext:memory", m => {
    ppmm.sharedData.set("wdext:memory", m.data);
    ppmm.sharedData.flush();
    // What was kept while logging that is now off goes, as in the
    // processes.
    for (const k of kept) {
      if (!m.data.track) k.drain = null;
      if (!m.data.gclog) k.gcs = null;
    }
    kept = kept.filter(k => k.drain || k.gcs);
  });
  ppmm.addMessageListener("wdext:kept", m => {
    kept.push(m.data);
    if (kept.length > 32) kept.shift();
  });
  // finish ends question id: a process that has not answered is an
  // error answer.
  const finish = id => {
    const a = asks.get(id);
    if (!a) return;
    asks.delete(id);
    a.timer.cancel();
    for (const mm of a.waiting) {
      a.answers.push({pid: mm.osPid, remoteType: mm.remoteType, error: `content process ${mm.osPid} did not answer in ${a.wait} ms`});
    }
    replies.set(id, {at: Date.now(), top: a.top, asker: a.asker, answers: a.answers});
  };
  // "wdext:ask" asks op of every content process, or of one by pid, for
  // at most wait ms; top is the asking page's top-level browsing context.
  ppmm.addMessageListener("wdext:ask", m => {
    const {id, op, arg, pid, top, wait} = m.data;
    const now = Date.now();
    for (const [k, r] of replies) {
      if (now - r.at > 60000) replies.delete(k);
    }
    const a = {waiting: new Set(), answers: [], top, asker: m.target.osPid, wait, timer: Cc["@mozilla.org/timer;1"].createInstance(Ci.nsITimer)};
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
      if (mm.isInProcess || (pid && mm.osPid !== pid)) continue;
      a.waiting.add(mm);
      mm.sendAsyncMessage("wdext:op", {id, op, arg, top});
    }
    if (!a.waiting.size) finish(id);
    else a.timer.initWithCallback(() => finish(id), wait, Ci.nsITimer.TYPE_ONE_SHOT);
  });
  ppmm.addMessageListener("wdext:answer", m => {
    const a = asks.get(m.data.id);
    if (a && a.waiting.delete(m.target)) {
      a.answers.push(m.data);
      if (!a.waiting.size) finish(m.data.id);
    }
  });
  // "wdext:answered" is question id's reply ({top, asker, answers}, which
  // debugger.js makes JSON of), null while processes are still answering.
  ppmm.addMessageListener("wdext:answered", m => {
    const r = replies.get(m.data);
    if (r) {
      replies.delete(m.data);
      return r;
    }
    return asks.has(m.data) ? null : {error: "no question of that id: asked over a minute ago, or never"};
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
