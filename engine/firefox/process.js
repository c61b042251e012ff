// wdext's Debugger in one content process: a process script that hub.js
// loads into every content process, those running and those yet to start
// (so a page that a cross-site navigation moves to a new process is
// tracked from its first allocation). Its debuggees are the process's web
// globals (not system ones: Marionette's, Firefox's actors'), adopted
// once something asks for them.
//
// The session's settings (allocation tracking, its probability, live
// objects' tracking, the GC log) are the parent's sharedData
// "wdext:memory": every process follows them as they change. A process
// answers the hub's "wdext:op" messages (drain, gcs, heap, census, live,
// tabs, forceWorkers) with JSON, and hands what it logged to the hub as
// it shuts down ("wdext:kept"). It also puts the Profiler polyfill in its
// dedicated workers, and gives its windows' profilers their periodic
// samples (below).
// Services.wdextDebugger is its face to debugger.js, run in the page's
// process, which asks the other processes through the hub.
(function () {
  if (Services.appinfo.processType !== Services.appinfo.PROCESS_TYPE_CONTENT || Services.wdextDebugger) {
    return;
  }
  const {addDebuggerToGlobal} = ChromeUtils.importESModule("resource://gre/modules/jsdebugger.sys.mjs");
  addDebuggerToGlobal(globalThis);
  const dbg = new Debugger();
  const mem = dbg.memory;
  // The log is bounded by wdext's command, which drains it (logLength).
  const logLength = 1000000;
  mem.maxAllocationsLogLength = logLength;
  let gcs = [];
  let settings = {track: false, p: 1, live: false, gclog: false};

  // web: g is a web page's global, in a process for web pages (not the
  // extensions' or Firefox's own pages').
  function web(g) {
    if (!/^(web|file)/.test(Services.appinfo.remoteType)) return false;
    try {
      const p = Cu.getObjectPrincipal(g.unsafeDereference());
      return !p.isSystemPrincipal && !p.isExpandedPrincipal;
    } catch (e) {
      return false;
    }
  }
  function adopt(g) {
    if (web(g)) {
      try { dbg.addDebuggee(g); } catch (e) {}
    }
  }
  let adopted = false;
  function adoptAll() {
    if (adopted) return;
    adopted = true;
    for (const g of dbg.findAllGlobals()) adopt(g);
    dbg.onNewGlobalObject = adopt;
  }
  function apply(s) {
    if (!s) return;
    settings = s;
    // Live objects (s.live) need every allocation's stack: while they
    // are tracked, allocations are sampled at probability 1.
    const track = s.track || s.live;
    if (track || s.gclog) adoptAll();
    mem.allocationSamplingProbability = s.live ? 1 : s.p;
    // Live objects alone need no log: SpiderMonkey's is kept to one
    // entry, which it drops as the next comes (measured on ESR 153:
    // draining the 1,000,000 entries of a click that kept 1,000,000
    // objects took 6.5 s). A log asked for starts empty, and one no
    // longer asked for goes, with what was read of it.
    const length = s.track ? logLength : 1;
    if (mem.maxAllocationsLogLength !== length) {
      if (mem.trackingAllocationSites) mem.drainAllocationsLog();
      mem.maxAllocationsLogLength = length;
      clearLog();
    }
    if (mem.trackingAllocationSites !== track) {
      // What was logged before goes (drainAllocationsLog throws once
      // tracking is off).
      if (mem.trackingAllocationSites) mem.drainAllocationsLog();
      mem.trackingAllocationSites = track;
      clearLog();
    }
    mem.onGarbageCollection = s.gclog ? stats => { gcs.push(stats); } : undefined;
    if (!s.gclog) gcs = [];
  }

  // SavedFrames are shared between the stacks that share them: each is
  // read once (a log has many entries of few stacks).
  function stacks() {
    const frames = new Map();
    const seen = new Map();
    function frame(f) {
      let out = frames.get(f);
      if (!out) {
        out = {functionDisplayName: f.functionDisplayName || "", source: f.source, sourceId: 0, line: f.line, column: f.column};
        frames.set(f, out);
      }
      return out;
    }
    // A frame of a window that went away is a dead object: the stack
    // ends there.
    return function stack(f) {
      if (!f) return [];
      let out = seen.get(f);
      if (!out) {
        out = [];
        try {
          for (let g = f; g && out.length < 64; g = g.parent) out.push(frame(g));
        } catch (e) {}
        seen.set(f, out);
      }
      return out;
    };
  }
  // plain makes a census JSON: SpiderMonkey's Maps (allocationStack,
  // keyed by SavedFrame, null or "noStack") become wdext's []StackEntry.
  function plain(v, stack) {
    if (Object.prototype.toString.call(v) === "[object Map]") {
      const out = [];
      let none = null;
      for (const [k, c] of v) {
        if (k === "noStack") none = {stack: null, noStack: true, census: plain(c, stack)};
        else out.push({stack: k ? stack(k) : [], census: plain(c, stack)});
      }
      if (none) out.push(none);
      return out;
    }
    if (Array.isArray(v)) return v.map(c => plain(c, stack));
    if (v && typeof v === "object") {
      const o = {};
      for (const k of Object.keys(v)) o[k] = plain(v[k], stack);
      return o;
    }
    return v;
  }
  // The log by columns: each stack once in "stacks", and per entry its
  // timestamp (ms since the browser started: the same clock in every
  // process), stack index (-1: none), class, size and inNursery; dropped
  // counts the entries lost (SpiderMonkey's log overflowed: at least
  // one; or this copy did, by the oldest).
  const columns = () => ({dropped: 0, stacks: [], timestamp: [], stack: [], class: [], size: [], inNursery: []});
  // logged holds what the log had when a window of the process went
  // away, read while its frames were alive (a dead window's frames are
  // dead objects), newest last; index finds a stack in it.
  let logged = columns();
  let index = new Map();
  // An entry whose code is Firefox's (Marionette's element commands
  // make thousands of objects in the page's realm: measured, 2,472 by
  // one click's dom.isInView) is the driver's, not the page's: its stack's
  // first frame not of a builtin is chrome: or resource: code. It is left
  // out (index -2).
  const firefoxCode = st => {
    const f = st.find(f => f.source !== "self-hosted");
    return f !== undefined && /^(chrome|resource):/.test(f.source);
  };
  function readLog() {
    if (!mem.trackingAllocationSites) return;
    if (!settings.track) {
      // Tracking for live objects alone: no one asked for the log.
      mem.drainAllocationsLog();
      return;
    }
    const stack = stacks();
    if (mem.allocationsLogOverflowed) logged.dropped++;
    for (const e of mem.drainAllocationsLog()) {
      let i = -1;
      if (e.frame) {
        i = index.get(e.frame);
        if (i === undefined) {
          const st = stack(e.frame);
          i = firefoxCode(st) ? -2 : logged.stacks.length;
          index.set(e.frame, i);
          if (i >= 0) logged.stacks.push(st);
        }
        if (i === -2) continue;
      }
      logged.timestamp.push(e.timestamp);
      logged.stack.push(i);
      logged.class.push(e.class);
      logged.size.push(e.size);
      logged.inNursery.push(e.inNursery);
    }
    const over = logged.timestamp.length - mem.maxAllocationsLogLength;
    if (over > 0) {
      for (const k of ["timestamp", "stack", "class", "size", "inNursery"]) logged[k].splice(0, over);
      logged.dropped += over;
    }
  }
  function clearLog() {
    logged = columns();
    index = new Map();
  }
  // drain is the log since the last drain, and the probability it was
  // sampled at.
  function drain() {
    readLog();
    const out = logged;
    out.p = mem.allocationSamplingProbability;
    clearLog();
    return out;
  }
  // collectAll is a full collection of the process: GC, CC (what only
  // DOM cycles held), GC again (what the CC freed).
  function collectAll() {
    Cu.forceGC();
    Cu.forceCC();
    Cu.forceGC();
  }
  // live is what is alive of the objects allocated while tracking ran,
  // after a full collection: SpiderMonkey's census by allocation stack
  // and object class, each group's count and bytes (the cells and what
  // they own), a stack of the driver's left out as in the log.
  function live() {
    adoptAll();
    collectAll();
    const count = {by: "count", count: true, bytes: true};
    const census = mem.takeCensus({breakdown: {by: "allocationStack", then: {by: "objectClass", then: count, other: count}, noStack: {by: "count"}}});
    const stack = stacks();
    const out = [];
    for (const [frame, byClass] of census) {
      if (frame === "noStack" || !frame) continue;
      const st = stack(frame);
      if (firefoxCode(st)) continue;
      for (const k of Object.keys(byClass)) {
        if (k !== "other") out.push({stack: st, class: k, count: byClass[k].count, bytes: byClass[k].bytes});
      }
    }
    return out;
  }
  Services.obs.addObserver(readLog, "inner-window-destroyed");

  // Dedicated workers: each gets the Profiler polyfill before its first
  // line, from its WorkerDebugger's script (worker.js, at the parent's
  // sharedData "wdext:workers".url), while Firefox holds the worker; a
  // worker without a response of its own (blob:, data:) is told its
  // creator's Document-Policy (its parent worker's, or its window's).
  // workers are the live ones, by WorkerDebugger.
  const workers = new Map();
  // workerWait bounds, in ms, what a worker is given to answer.
  const workerWait = 5000;
  let calls = 0;
  // tell runs script in worker w and resolves to {value}, {error} (it
  // threw), {closed: true} or, after ms, {busy: true}: the worker runs it
  // when its script yields to its event loop.
  function tell(w, script, ms) {
    const id = ++calls;
    return new Promise(resolve => {
      const timer = Cc["@mozilla.org/timer;1"].createInstance(Ci.nsITimer);
      const settle = r => {
        timer.cancel();
        w.calls.delete(id);
        resolve(r);
      };
      w.calls.set(id, settle);
      timer.initWithCallback(() => settle({busy: true}), ms, Ci.nsITimer.TYPE_ONE_SHOT);
      try {
        w.dbg.postMessage(JSON.stringify({id, script}));
      } catch (e) {
        settle({closed: true});
      }
    });
  }
  function gone(wd) {
    const w = workers.get(wd);
    if (!w) return;
    workers.delete(wd);
    for (const settle of [...w.calls.values()]) settle({closed: true});
  }
  // release lets a held worker run (once).
  function release(w) {
    if (w.held) {
      w.held = false;
      try { w.dbg.setDebuggerReady(true); } catch (e) {}
    }
  }
  function creatorPolicy(wd) {
    if (wd.parent) {
      const p = workers.get(wd.parent);
      return p && p.policy;
    }
    try {
      return wd.window.wrappedJSObject[Symbol.for("wdext.profiler.policy")];
    } catch (e) {
      return undefined;
    }
  }
  const workerDebuggers = Cc["@mozilla.org/dom/workers/workerdebuggermanager;1"].getService(Ci.nsIWorkerDebuggerManager);
  workerDebuggers.addListener({
    onRegister(wd) {
      const setup = Services.cpmm.sharedData.get("wdext:workers");
      if (!setup || wd.type !== Ci.nsIWorkerDebugger.TYPE_DEDICATED || wd.isChrome || !/^(web|file)/.test(Services.appinfo.remoteType)) return;
      // (url is the script's URL as the creator gave it: maybe relative.)
      const w = {dbg: wd, calls: new Map(), held: true, policy: /^(blob|data):/i.test(wd.url) ? creatorPolicy(wd) : undefined};
      workers.set(wd, w);
      wd.setDebuggerReady(false);
      wd.addListener({
        onMessage(m) {
          const {id, value, error, closed} = JSON.parse(m);
          const settle = w.calls.get(id);
          if (settle) settle({value, error, closed});
        },
        onClose() { gone(wd); },
        // The debugger script failed (worker.js): the worker runs without
        // the polyfill rather than never.
        onError() { release(w); },
      });
      try {
        wd.initialize(setup.url);
      } catch (e) {
        gone(wd);
        release(w);
        return;
      }
      const policy = w.policy === undefined ? "" : w.policy ? setup.allowed : setup.denied;
      tell(w, setup.polyfill + policy, workerWait).then(() => release(w));
    },
    onUnregister: gone,
  });
  // forceWorkers runs script (a forced sample) in every live worker and
  // answers how many workers ran it, how many profilers took a sample,
  // how many workers were busy past workerWait, and the workers' errors.
  // A worker that closed meanwhile has no profiler left to sample.
  async function forceWorkers(script) {
    const rs = await Promise.all([...workers.values()].map(w => tell(w, script, workerWait)));
    return {
      workers: rs.filter(r => !r.closed).length,
      took: rs.reduce((n, r) => n + Math.max(0, r.value || 0), 0),
      busy: rs.filter(r => r.busy).length,
      errors: rs.filter(r => r.error).map(r => r.error),
    };
  }

  const reporters = Cc["@mozilla.org/memory-reporter-manager;1"].getService(Ci.nsIMemoryReporterManager);
  // jsBytes is the JavaScript memory (objects, strings, the rest) of the
  // part of w's tab that this process holds.
  function jsBytes(w) {
    const out = Array.from({length: 9}, () => ({}));
    reporters.sizeOfTab(w, ...out);
    return out[0].value + out[1].value + out[2].value;
  }
  // documents are the process's current documents, one per browsing
  // context (a window can be among the debuggees twice, measured: the
  // same browsing context, both current globals).
  function documents() {
    adoptAll();
    const docs = [];
    const ids = new Set();
    for (const g of dbg.getDebuggees()) {
      try {
        const w = g.unsafeDereference();
        if (!w.document || !w.windowGlobalChild || !w.windowGlobalChild.isCurrentGlobal) continue;
        const bc = w.browsingContext;
        if (ids.has(bc.id)) continue;
        ids.add(bc.id);
        docs.push({w, bc, id: bc.id, parent: bc.parent ? bc.parent.id : null, top: bc.top.id, url: w.location.href, origin: w.origin});
      } catch (e) {}
    }
    // A root has no ancestor in this process (the top, or a frame whose
    // ancestors all live in other processes).
    for (const d of docs) {
      let p = d.bc.parent;
      while (p && !ids.has(p.id)) p = p.parent;
      d.root = !p;
    }
    return docs;
  }
  // tabs is the part of each tab that this process holds: its documents
  // by browsing context (parent: null for a top-level one), the frame
  // elements in them, and the JavaScript bytes under each root; with
  // collect, before and after a full collection (Cu.forceGC, forceCC,
  // forceGC), run only where the process holds a part of the asker's tab
  // (top).
  function tabs(collect, top) {
    const docs = documents();
    // containers: the frame elements of these documents, by the browsing
    // context each holds (its frame may live in another process).
    const containers = [];
    for (const d of docs) {
      for (const el of d.w.document.querySelectorAll("iframe, frame, object, embed")) {
        try {
          if (el.browsingContext) {
            containers.push({frame: el.browsingContext.id, localName: el.localName, id: el.id, src: el.getAttribute("src") || "", data: el.getAttribute("data") || ""});
          }
        } catch (e) {}
      }
    }
    const roots = docs.filter(d => d.root);
    collect = collect && roots.some(r => r.top === top);
    const before = roots.map(r => (collect ? jsBytes(r.w) : 0));
    if (collect) collectAll();
    return {
      frames: docs.map(({id, parent, top, url, origin}) => ({id, parent, top, url, origin})),
      containers,
      roots: roots.map((r, i) => ({id: r.id, top: r.top, url: r.url, before: before[i], after: jsBytes(r.w)})),
    };
  }

  // heap says what the process's documents are, a top-level one's URL
  // first, and whether there is one.
  function heap() {
    const docs = documents();
    const tops = docs.filter(d => d.parent === null);
    return {urls: [...tops, ...docs.filter(d => d.parent !== null)].map(d => d.url), top: tops.length > 0};
  }
  function run(op, arg, top) {
    switch (op) {
    case "drain":
      return drain();
    case "gcs":
      return {collecting: settings.gclog, gcs: gcs.splice(0)};
    case "heap":
      return heap();
    case "live":
      return live();
    case "census":
      adoptAll();
      return plain(arg ? mem.takeCensus({breakdown: arg}) : mem.takeCensus(), stacks());
    case "forceWorkers":
      return forceWorkers(arg);
    case "tabs":
      return tabs(arg, top);
    }
    throw new Error("unknown operation " + op);
  }
  // answer is op's answer, or a promise of it for an op that waits
  // (forceWorkers).
  function answer(op, arg, top) {
    const out = {pid: Services.appinfo.processID, remoteType: Services.appinfo.remoteType};
    const fail = e => {
      out.error = String(e);
      return out;
    };
    try {
      const v = run(op, arg, top);
      if (v instanceof Promise) return v.then(x => (out.json = JSON.stringify(x), out), fail);
      out.json = JSON.stringify(v);
    } catch (e) {
      fail(e);
    }
    return out;
  }
  apply(Services.cpmm.sharedData.get("wdext:memory"));
  Services.cpmm.sharedData.addEventListener("change", e => {
    if (e.changedKeys.includes("wdext:memory")) apply(Services.cpmm.sharedData.get("wdext:memory"));
  });
  Services.cpmm.addMessageListener("wdext:op", m => {
    Promise.resolve(answer(m.data.op, m.data.arg, m.data.top)).then(a => Services.cpmm.sendAsyncMessage("wdext:answer", {id: m.data.id, ...a}));
  });
  // Periodic samples, while the hub's Gecko profiler runs (sharedData
  // "wdext:profiling"): a profiler's stop() asks with
  // console.debug("wdext.profiler.stop", token); its window is given the
  // samples of this process's main thread taken since the window's last
  // delivery, with the token (without samples if the hub failed: the
  // stop() is not kept waiting). A document that is no longer its
  // browsing context's current one gets nothing; its stop() resolves
  // after the polyfill's 5 s.
  if (Services.cpmm.sharedData.get("wdext:profiling")) {
    const delivered = new WeakMap(); // window → epoch ms of its last sample
    const waiting = new Map(); // question id → {wgc, token, at}, at most 256 for 10 s
    let asked = 0;
    const storage = Cc["@mozilla.org/consoleAPI-storage;1"].getService(Ci.nsIConsoleAPIStorage);
    storage.addLogEventListener(msg => {
      const a = msg.arguments;
      if (msg.level !== "debug" || !a || a[0] !== "wdext.profiler.stop" || typeof a[1] !== "string") return;
      const wgc = WindowGlobalChild.getByInnerWindowId(Number(msg.innerID));
      const win = wgc && wgc.browsingContext && wgc.browsingContext.window;
      if (!win) return;
      const now = Date.now();
      for (const [k, w] of waiting) {
        if (now - w.at > 10000) waiting.delete(k);
      }
      if (waiting.size >= 256) return;
      const id = ++asked;
      waiting.set(id, {wgc, token: a[1], at: now});
      Services.cpmm.sendAsyncMessage("wdext:samples", {id, since: delivered.get(win) || 0});
    }, Services.scriptSecurityManager.getSystemPrincipal());
    Services.cpmm.addMessageListener("wdext:samples", m => {
      const w = waiting.get(m.data.id);
      waiting.delete(m.data.id);
      if (!w || w.wgc.isClosed) return;
      const win = w.wgc.browsingContext && w.wgc.browsingContext.window;
      const current = win && !win.closed && win.windowGlobalChild;
      if (!current || current.innerWindowId !== w.wgc.innerWindowId) return;
      const batch = m.data.batch || {frames: [], samples: []};
      if (batch.samples.length) delivered.set(win, batch.samples[batch.samples.length - 1][0]);
      const deliver = Cu.waiveXrays(win)[Symbol.for("wdext.profiler.deliver")];
      if (typeof deliver === "function") deliver(Cu.cloneInto([w.token], win), Cu.cloneInto(batch, win));
    });
  }

  Services.obs.addObserver(() => {
    if (mem.trackingAllocationSites || gcs.length) {
      Services.cpmm.sendAsyncMessage("wdext:kept", {drain: answer("drain"), gcs: answer("gcs")});
    }
  }, "content-child-will-shutdown");

  // reply is the JSON of processes' answers for debugger.js: each
  // process's JSON goes in as it is, not quoted again (a log's JSON is
  // megabytes). top is the asking page's top-level browsing context,
  // asker the asking process's pid.
  const reply = (top, asker, list) => `{"top": ${top}, "asker": ${asker}, "answers": [` + list.map(a => `{"pid": ${a.pid}, "remoteType": ${JSON.stringify(a.remoteType)}, ` +
    (a.error === undefined ? `"value": ${a.json}}` : `"error": ${JSON.stringify(a.error)}}`)).join(", ") + "]}";

  Services.wdextDebugger = {
    // settings sets the session's settings, in every process (the
    // parent's sharedData) and in this one at once.
    settings(s) {
      Services.cpmm.sendSyncMessage("wdext:memory", s);
      apply(s);
      return settings;
    },
    // here answers op in this process alone (an op that waits is not
    // asked so). top, the asker's top-level browsing context, goes with
    // the answers.
    here(op, arg, top) {
      let a = answer(op, arg, top);
      if (a instanceof Promise) {
        a = {pid: Services.appinfo.processID, remoteType: Services.appinfo.remoteType, error: op + " is asked of every process, not of one"};
      }
      return reply(top, Services.appinfo.processID, [a]);
    },
    reply,
  };
})();
