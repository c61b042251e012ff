// wdext's Debugger in one content process: a process script that hub.js
// loads into every content process, those running and those yet to start
// (so a page that a cross-site navigation moves to a new process is
// tracked from its first allocation). Its debuggees are the process's web
// globals (not system ones: Marionette's, Firefox's actors'), adopted
// once something asks for them.
//
// The session's settings (allocation tracking, its probability, the GC
// log) are the parent's sharedData "wdext:memory": every process follows
// them as they change. A process answers the hub's "wdext:op" messages
// (drain, gcs, heap, census) with JSON, and hands what it logged to the
// hub as it shuts down ("wdext:kept"). Services.wdextDebugger is its
// face to debugger.js, run in the page's process, which asks the others
// through the hub ("wdext:ask", "wdext:answers").
(function () {
  if (Services.appinfo.processType !== Services.appinfo.PROCESS_TYPE_CONTENT || Services.wdextDebugger) {
    return;
  }
  const {addDebuggerToGlobal} = ChromeUtils.importESModule("resource://gre/modules/jsdebugger.sys.mjs");
  addDebuggerToGlobal(globalThis);
  const dbg = new Debugger();
  const mem = dbg.memory;
  // The log is bounded by wdext's command, which drains it.
  mem.maxAllocationsLogLength = 1000000;
  let gcs = [];
  let settings = {track: false, p: 1, gclog: false};

  // web: g is a web page's global, in a process for web pages (not the
  // extensions' or Firefox's own pages'), and not a sandbox (Marionette
  // runs a client's scripts in one with the page's principal).
  function web(g) {
    if (!/^(web|file)/.test(Services.appinfo.remoteType) || g.class === "Sandbox") return false;
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
    if (s.track || s.gclog) adoptAll();
    mem.allocationSamplingProbability = s.p;
    if (mem.trackingAllocationSites !== s.track) {
      // What was logged before goes (drainAllocationsLog throws once
      // tracking is off).
      if (mem.trackingAllocationSites) mem.drainAllocationsLog();
      mem.trackingAllocationSites = s.track;
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
  // process), stack index (-1: none), class, size and inNursery.
  const columns = () => ({stacks: [], timestamp: [], stack: [], class: [], size: [], inNursery: []});
  // logged holds what the log had when a window of the process went
  // away, read while its frames were alive (a dead window's frames are
  // dead objects), newest last; index finds a stack in it.
  let logged = columns();
  let index = new Map();
  function readLog() {
    if (!mem.trackingAllocationSites) return;
    const stack = stacks();
    for (const e of mem.drainAllocationsLog()) {
      let i = -1;
      if (e.frame) {
        i = index.get(e.frame);
        if (i === undefined) {
          i = logged.stacks.length;
          index.set(e.frame, i);
          logged.stacks.push(stack(e.frame));
        }
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
    }
  }
  function clearLog() {
    logged = columns();
    index = new Map();
  }
  function drain() {
    readLog();
    const out = logged;
    clearLog();
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
  let calls = 0;
  // tell runs script in worker w and resolves to {value} or {error}.
  function tell(w, script) {
    const id = ++calls;
    return new Promise(resolve => {
      w.calls.set(id, resolve);
      w.dbg.postMessage(JSON.stringify({id, script}));
    });
  }
  function gone(wd) {
    const w = workers.get(wd);
    if (!w) return;
    workers.delete(wd);
    for (const resolve of w.calls.values()) resolve({error: "the worker closed"});
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
      const w = {dbg: wd, calls: new Map(), policy: /^(blob|data):/i.test(wd.url) ? creatorPolicy(wd) : undefined};
      workers.set(wd, w);
      wd.setDebuggerReady(false);
      wd.addListener({
        onMessage(m) {
          const {id, value, error} = JSON.parse(m);
          const resolve = w.calls.get(id);
          w.calls.delete(id);
          if (resolve) resolve({value, error});
        },
        onClose() { gone(wd); },
        onError() {},
      });
      try {
        wd.initialize(setup.url);
      } catch (e) {
        gone(wd);
        wd.setDebuggerReady(true);
        return;
      }
      const policy = w.policy === undefined ? "" : w.policy ? setup.allowed : setup.denied;
      tell(w, setup.polyfill + policy).then(() => {
        try { wd.setDebuggerReady(true); } catch (e) {}
      });
    },
    onUnregister: gone,
  });
  // forceWorkers runs script (a forced sample) in every live worker and
  // answers how many workers ran it, how many profilers took a sample,
  // and the workers' errors.
  async function forceWorkers(script) {
    const rs = await Promise.all([...workers.values()].map(w => tell(w, script)));
    return {
      workers: rs.length,
      took: rs.reduce((n, r) => n + Math.max(0, r.value || 0), 0),
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
  // tabs is the part of each tab that this process holds: its current
  // documents by browsing context (parent: null for a top-level one), the
  // frame elements in them, and the JavaScript bytes under each root (a document whose parent is in
  // another process, or a top-level one); with collect, before and after
  // a full collection (Cu.forceGC, forceCC, forceGC).
  function tabs(collect) {
    adoptAll();
    // A window can be among the debuggees twice (measured: the same
    // browsing context, both current): one document per browsing context.
    const docs = [];
    const ids = new Set();
    for (const g of dbg.getDebuggees()) {
      try {
        const w = g.unsafeDereference();
        if (!w.document || !w.windowGlobalChild || !w.windowGlobalChild.isCurrentGlobal) continue;
        const bc = w.browsingContext;
        if (ids.has(bc.id)) continue;
        ids.add(bc.id);
        docs.push({w, id: bc.id, parent: bc.parent ? bc.parent.id : null, top: bc.top.id, url: w.location.href, origin: w.origin});
      } catch (e) {}
    }
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
    const roots = docs.filter(d => d.parent === null || !ids.has(d.parent));
    const before = roots.map(r => (collect ? jsBytes(r.w) : 0));
    if (collect) {
      Cu.forceGC();
      Cu.forceCC();
      Cu.forceGC();
    }
    return {
      frames: docs.map(({w, ...d}) => d),
      containers,
      roots: roots.map((r, i) => ({id: r.id, top: r.top, url: r.url, before: before[i], after: jsBytes(r.w)})),
    };
  }

  // heap says what the process's web globals are: the documents' URLs,
  // and whether one is a top-level document.
  function heap() {
    adoptAll();
    const urls = [];
    let top = false;
    for (const g of dbg.getDebuggees()) {
      try {
        const w = g.unsafeDereference();
        if (!w.document || !w.location) continue;
        urls.push(w.location.href);
        top = top || w.top === w;
      } catch (e) {}
    }
    return {urls, top};
  }
  function run(op, arg) {
    switch (op) {
    case "drain":
      return drain();
    case "gcs":
      return {collecting: settings.gclog, gcs: gcs.splice(0)};
    case "heap":
      return heap();
    case "census":
      adoptAll();
      return plain(arg ? mem.takeCensus({breakdown: arg}) : mem.takeCensus(), stacks());
    case "forceWorkers":
      return forceWorkers(arg);
    case "tabs":
      return tabs(arg);
    }
    throw new Error("unknown operation " + op);
  }
  // answer is op's answer, or a promise of it for an op that waits
  // (forceWorkers).
  function answer(op, arg) {
    const out = {pid: Services.appinfo.processID, remoteType: Services.appinfo.remoteType};
    const fail = e => {
      out.error = String(e);
      return out;
    };
    try {
      const v = run(op, arg);
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
    Promise.resolve(answer(m.data.op, m.data.arg)).then(a => Services.cpmm.sendAsyncMessage("wdext:answer", {id: m.data.id, ...a}));
  });
  Services.obs.addObserver(() => {
    if (mem.trackingAllocationSites || gcs.length) {
      Services.cpmm.sendAsyncMessage("wdext:kept", {drain: answer("drain"), gcs: answer("gcs")});
    }
  }, "content-child-will-shutdown");

  // reply is an answer for debugger.js: each process's JSON goes in as
  // it is, not quoted again (a log's JSON is megabytes).
  const reply = (top, list) => `{"top": ${top}, "answers": [` + list.map(a => `{"pid": ${a.pid}, "remoteType": ${JSON.stringify(a.remoteType)}, ` +
    (a.error === undefined ? `"value": ${a.json}}` : `"error": ${JSON.stringify(a.error)}}`)).join(", ") + "]}";
  // asked holds the questions asked of other processes, by id: their
  // reply once the hub has brought the answers, until it is collected or
  // a minute has passed.
  const asked = new Map();
  Services.cpmm.addMessageListener("wdext:answers", m => {
    const a = asked.get(m.data.id);
    if (a) {
      // This process answers itself, sparing its answer two trips.
      Promise.resolve(a.all ? answer(a.op, a.arg) : null).then(own => {
        a.reply = reply(a.top, own ? [own, ...m.data.answers] : m.data.answers);
      });
    }
  });

  Services.wdextDebugger = {
    // settings sets the session's settings, in every process (the
    // parent's sharedData) and in this one at once.
    settings(s) {
      Services.cpmm.sendSyncMessage("wdext:memory", s);
      apply(s);
      return settings;
    },
    // here answers op in this process alone. top, the asker's top-level
    // browsing context, goes with the answers.
    here: (op, arg, top) => reply(top, [answer(op, arg)]),
    // ask asks op of every content process (pid 0), this one included,
    // or of the process of pid, and returns the question's id.
    ask(op, arg, pid, top) {
      const now = Date.now();
      for (const [id, a] of asked) {
        if (now - a.at > 60000) asked.delete(id);
      }
      const id = Services.uuid.generateUUID().toString();
      asked.set(id, {op, arg, all: !pid, top, at: now, reply: null});
      Services.cpmm.sendAsyncMessage("wdext:ask", {id, op, arg, pid});
      return id;
    },
    // answered is the reply to question id, or null while processes are
    // still answering.
    answered(id) {
      const a = asked.get(id);
      if (!a) return JSON.stringify({error: "the question was asked over a minute ago, or never"});
      if (a.reply !== null) asked.delete(id);
      return a.reply;
    },
  };
})();
