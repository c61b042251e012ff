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
// It also starts the Gecko profiler, which samples every process's main
// thread all along, and answers a content process's "wdext:samples" with
// its main thread's samples since a time, for the Profiler polyfill's
// periodic samples. The script returns whether the profiler runs.
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
  // drain or gcs question takes its part. lostLogs counts the allocation
  // logs of the oldest, dropped past 32: the next drain says so.
  let kept = [];
  let lostLogs = 0;
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
    if (!m.data.track) lostLogs = 0;
  });
  ppmm.addMessageListener("wdext:kept", m => {
    kept.push(m.data);
    if (kept.length > 32 && kept.shift().drain) lostLogs++;
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
      if (op === "drain" && lostLogs) {
        // At least one entry each; a log of no entries needs no columns.
        a.answers.push({pid: 0, remoteType: "", json: JSON.stringify({dropped: lostLogs})});
        lostLogs = 0;
      }
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
  // The Gecko profiler: JavaScript frames of every process's main thread,
  // 10 ms apart (Blink's Profiler samples at multiples of 10 ms too; 1 ms
  // slowed a DOM loop by 15 to 35%, measured), in a ring buffer of 2^20
  // entries (8 MB, minutes of samples): a stop() gathers the whole buffer
  // of every process (getProfileDataAsync's sinceTime filtered nothing,
  // measured), so the buffer bounds its cost.
  try {
    if (!Services.profiler.IsActive()) Services.profiler.StartProfiler(1 << 20, 10, ["js"], ["GeckoMain"]);
    Services.wdextProfiling = Services.profiler.IsActive();
  } catch (e) {
    Services.wdextProfiling = false;
  }
  ppmm.sharedData.set("wdext:profiling", Services.wdextProfiling);
  ppmm.sharedData.flush();
  // Gecko refuses a gather while one runs, and one that started before a
  // stop() may miss its samples: questions wait for the next gather, one
  // at a time, at most 256 of them.
  let queued = [];
  let gathering = false;
  const gather = () => {
    const now = queued;
    queued = [];
    gathering = true;
    Services.profiler.getProfileDataAsync().then(p => {
      for (const q of now) {
        try {
          q.answer({batch: samplesOf(p, q.pid, q.since)});
        } catch (e) {
          q.answer({error: String(e)});
        }
      }
    }, e => {
      for (const q of now) q.answer({error: String(e)});
    }).finally(() => {
      gathering = false;
      if (queued.length) gather();
    });
  };
  ppmm.addMessageListener("wdext:samples", m => {
    const {id, since} = m.data;
    const answer = reply => {
      try {
        m.target.sendAsyncMessage("wdext:samples", {id, ...reply});
      } catch (e) {
        // the process went away
      }
    };
    if (queued.length >= 256) {
      answer({error: "too many profilers stopping at once"});
      return;
    }
    queued.push({pid: m.target.osPid, since, answer});
    if (!gathering) gather();
  });
  ppmm.loadProcessScript("data:application/javascript;charset=utf-8," + encodeURIComponent(processScript), true);
}
return Services.wdextProfiling;

// samplesOf is the main-thread samples of content process pid in profile
// p (Gecko's profile format) taken after since (epoch ms), as the
// polyfill's batch: {frames: [{name, url, line, column}], samples:
// [[epoch ms, [frame index, outermost first]]]}. A frame is a
// JavaScript function's (its name, script and the function's own line
// and column), a builtin's (self-hosted code, a Web IDL method: its name
// alone), or left out (Gecko's labels, native code).
function samplesOf(p, pid, since) {
  const batch = {frames: [], samples: []};
  let thread, start;
  for (const sp of p.processes || []) {
    for (const th of sp.threads) {
      if (th.pid === pid && th.name === "GeckoMain") [thread, start] = [th, sp.meta.startTime];
    }
  }
  if (!thread) return batch;
  const sc = thread.samples.schema, ss = thread.stackTable.schema, fs = thread.frameTable.schema;
  const frameIndex = new Map(); // frameTable index → batch frame index, -1: left out
  const frameOf = i => {
    let k = frameIndex.get(i);
    if (k !== undefined) return k;
    const f = thread.frameTable.data[i];
    const frame = jsFrame(thread.stringTable[f[fs.location]], f[fs.relevantForJS]);
    k = frame ? batch.frames.push(frame) - 1 : -1;
    frameIndex.set(i, k);
    return k;
  };
  const stacks = new Map(); // stackTable index → frame indexes, outermost first
  const stackOf = s => {
    if (s === null || s === undefined) return [];
    let out = stacks.get(s);
    if (out) return out;
    const [prefix, frame] = [thread.stackTable.data[s][ss.prefix], thread.stackTable.data[s][ss.frame]];
    out = stackOf(prefix);
    const k = frameOf(frame);
    if (k >= 0) out = out.concat(k);
    stacks.set(s, out);
    return out;
  };
  for (const row of thread.samples.data) {
    const at = start + row[sc.time];
    if (at > since) batch.samples.push([at, stackOf(row[sc.stack])]);
  }
  return batch;
}

// jsFrame reads a Gecko frame's location: "name (url:line:column)[source]"
// or "url:line:column[source]" for JavaScript, "name (self-hosted:…)" for
// a builtin; a label relevant for JavaScript (a Web IDL method or
// accessor, "Performance.now", "get Element.id") is a builtin too, named
// as V8 and JavaScriptCore name it ("now", "get id").
function jsFrame(location, relevantForJS) {
  // Code from eval or new Function is "url line N > eval:line:column".
  location = location.replace(/ line \d+ > [^:()]*(?=:\d+)/g, "");
  const m = /^(?:(.*) \()?(\S+?)(?::(\d+)(?::(\d+))?)?\)?(?:\[\d+\])?$/.exec(location);
  if (m && m[2] === "self-hosted") return {name: m[1] || ""};
  if (m && /^[a-zA-Z][\w+.-]*:(?!:)/.test(m[2])) {
    const [, name = "", url, line, column] = m;
    const frame = {name, url};
    if (line) frame.line = Number(line);
    if (column) frame.column = Number(column);
    return frame;
  }
  return relevantForJS ? {name: location.replace(/^((?:get |set )?)[A-Za-z]\w*\./, "$1")} : null;
}
