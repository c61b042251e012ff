// wdext's Profiler polyfill: the JS Self-Profiling API's Profiler
// interface (https://wicg.github.io/js-self-profiling/) for engines that
// lack it, in windows and dedicated workers. It never samples by itself:
// samples come from forced samples and, where wdext's engine provides
// them, from the engine's own sampling profiler (periodic samples).
//
//   globalThis[Symbol.for("wdext.profiler.forceSample")]()
//     adds one sample without a stack to every started profiler of this
//     realm and returns how many took it (WebDriver forcesample);
//   globalThis[Symbol.for("wdext.profiler.forceSampleHere")]()
//     synchronously adds one sample whose stack is the caller's, parsed
//     from an Error stack (JavaScriptCore "name@url:line:col" or V8
//     "at name (url:line:col)"), to every started profiler of this realm;
//   globalThis[Symbol.for("wdext.profiler.skipNextForce")]()
//     makes the next forceSample() in this realm a no-op: testdriver's
//     force_sample() samples its own realm here, with the caller's stack,
//     and then asks for the session-wide force for every other realm;
//   globalThis[Symbol.for("wdext.profiler.setPolicy")](allowed)
//     tells the realm whether its document's Document-Policy allows
//     js-profiling (the first call wins; until then it is not known and
//     the constructor allows it);
//   globalThis[Symbol.for("wdext.profiler.policy")]
//     is what the realm was told (true, false, or undefined: not told),
//     for an engine that passes a creator's policy on to its workers;
//   globalThis[Symbol.for("wdext.profiler.enableSampler")]()
//     says that the engine samples this realm's agent periodically:
//     stop() then asks it for the samples (a console.debug message
//     "wdext.profiler.stop" with a token) and resolves once
//     ...deliver(tokens, batch) has brought them, or after 5 s;
//   globalThis[Symbol.for("wdext.profiler.deliver")](tokens, batch)
//     gives the realm's live profilers the engine's samples: batch is
//     {frames: [{name, url, line, column}], samples: [[epochMs, [frame
//     indexes, outermost first]]]}, times as performance.timeOrigin +
//     performance.now(); each profiler keeps those from its own lifetime,
//     one per sampleInterval at most, with only its realm's frames (and
//     those of builtins its realm's code calls).
//
// The script is an expression of one argument, the global name to install
// the interface under ("Profiler"). Installing twice in a realm does
// nothing the second time.
(function (interfaceName) {
  "use strict";
  const g = globalThis;
  const FORCE = Symbol.for("wdext.profiler.forceSample");
  const FORCE_HERE = Symbol.for("wdext.profiler.forceSampleHere");
  if (typeof g[FORCE] === "function") return;
  // [Exposed=(Window,DedicatedWorker)]
  const isWindow = typeof Window === "function" && g instanceof Window;
  const isWorker = typeof DedicatedWorkerGlobalScope === "function" && g instanceof DedicatedWorkerGlobalScope;
  if (!isWindow && !isWorker) return;

  const now = () => performance.now();
  const origin = performance.timeOrigin;
  const started = new Set(); // the started profilers of this realm
  const live = new Set(); // started, or stopped and waiting for the engine's samples
  let policy; // js-profiling allowed by the document's policy; undefined: not known
  let sampler = false; // the engine delivers periodic samples
  const pending = new Map(); // stop tokens waiting for the engine's samples
  const realmToken = Math.random().toString(36).slice(2) + "-" + Math.floor(origin);
  let nextToken = 0;
  const debug = g.console && typeof g.console.debug === "function" ? g.console.debug.bind(g.console) : undefined;

  // WebIDL conversions.
  function toDouble(v, what) {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new TypeError(`Failed to construct '${interfaceName}': ${what} is not a finite floating-point value.`);
    return n;
  }
  function toUnsignedLong(v) {
    let n = Number(v);
    if (!Number.isFinite(n) || n === 0) return 0;
    n = Math.trunc(n) % 2 ** 32;
    return n < 0 ? n + 2 ** 32 : n;
  }

  // "get an element ID for an item in a list": the index of an equal item,
  // appended if there is none. keys maps an item's key to its index.
  function elementID(list, keys, key, item) {
    let id = keys.get(key);
    if (id === undefined) {
      id = list.length;
      list.push(item);
      keys.set(key, id);
    }
    return id;
  }

  let take, offer;
  class Profiler extends EventTarget {
    #interval;
    #limit;
    #state = "started";
    #trace = { resources: [], frames: [], stacks: [], samples: [] };
    #keys = { resources: new Map(), frames: new Map(), stacks: new Map() };
    #fullQueued = false;
    #start = origin + now(); // lifetime, as epoch ms, for periodic samples
    #end = Infinity;
    #periodic = []; // [timestamp, frames] from the engine
    // The time of the last periodic sample kept, or of the sample taken at
    // construction: a periodic sample is kept only a sampleInterval or
    // more after it (forced samples do not move it).
    #lastPeriodic;

    constructor(options) {
      super();
      // ProfilerInitOptions, converted as a WebIDL dictionary: members in
      // lexicographic order, required ones present.
      if (options !== undefined && options !== null && typeof options !== "object" && typeof options !== "function") {
        throw new TypeError(`Failed to construct '${interfaceName}': The provided value is not of type 'ProfilerInitOptions'.`);
      }
      const o = options ?? {};
      const maxBufferSize = o.maxBufferSize;
      if (maxBufferSize === undefined) throw new TypeError(`Failed to construct '${interfaceName}': required member maxBufferSize is undefined.`);
      const limit = toUnsignedLong(maxBufferSize);
      const sampleInterval = o.sampleInterval;
      if (sampleInterval === undefined) throw new TypeError(`Failed to construct '${interfaceName}': required member sampleInterval is undefined.`);
      const interval = toDouble(sampleInterval, "sampleInterval");
      // The constructor steps.
      if (interval < 0) throw new RangeError(`Failed to construct '${interfaceName}': sampleInterval must be non-negative.`);
      if (policy === false) {
        throw new DOMException(`Failed to construct '${interfaceName}': JS profiling is disabled by Document Policy.`, "NotAllowedError");
      }
      // The sample interval is kept as asked: this profiler never samples
      // on a timer, so there is nothing to round to.
      this.#interval = interval;
      this.#limit = limit;
      started.add(this);
      live.add(this);
      // A sample at construction with the caller's stack, as V8 takes one;
      // periodic samples come a sampleInterval or more after it.
      const at = now();
      this.#lastPeriodic = at;
      this.#take(at, wdextConstructionStack());
    }

    get sampleInterval() {
      if (typeof this !== "object" || this === null || !(#interval in this)) throw new TypeError("Illegal invocation");
      return this.#interval;
    }

    get stopped() {
      if (typeof this !== "object" || this === null || !(#state in this)) throw new TypeError("Illegal invocation");
      return this.#state === "stopped";
    }

    stop() {
      if (typeof this !== "object" || this === null || !(#state in this)) return Promise.reject(new TypeError("Illegal invocation"));
      if (this.#state === "stopped") {
        return Promise.reject(new DOMException("The profiler has already been stopped.", "InvalidStateError"));
      }
      this.#state = "stopped";
      started.delete(this);
      this.#end = origin + now();
      if (!sampler || !debug) return Promise.resolve(this.#finish());
      // Ask the engine for the periodic samples taken so far.
      const token = realmToken + ":" + nextToken++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(token);
          resolve(this.#finish());
        }, 5000);
        pending.set(token, () => {
          clearTimeout(timer);
          resolve(this.#finish());
        });
        debug("wdext.profiler.stop", token);
      });
    }

    // The trace: forced and periodic samples merged by time, up to the
    // buffer's size.
    #finish() {
      live.delete(this);
      const t = this.#trace;
      this.#trace = null;
      if (this.#periodic.length > 0) {
        this.#trace = t;
        const periodic = this.#periodic.map(([timestamp, frames]) => {
          const s = { timestamp };
          const id = this.#stackID(frames);
          if (id !== undefined) s.stackId = id;
          return s;
        });
        this.#trace = null;
        const merged = [];
        let i = 0, j = 0;
        while (i < t.samples.length || j < periodic.length) {
          if (j >= periodic.length || (i < t.samples.length && t.samples[i].timestamp <= periodic[j].timestamp)) merged.push(t.samples[i++]);
          else merged.push(periodic[j++]);
        }
        t.samples = merged.slice(0, this.#limit);
      }
      return t;
    }

    // take a sample: stack is a list of frames, outermost first, or
    // undefined for a sample without a stack.
    static {
      take = (p, timestamp, stack) => p.#take(timestamp, stack);
      offer = (p, epoch, frames) => p.#offer(epoch, frames);
    }

    // offer keeps a periodic sample of the engine's (epoch ms, frames
    // outermost first) taken in this profiler's lifetime, one per sample
    // interval at most.
    #offer(epoch, frames) {
      if (epoch < this.#start || epoch > this.#end) return;
      const timestamp = epoch - origin;
      if (timestamp < this.#lastPeriodic + this.#interval) return;
      if (this.#periodic.length + (this.#trace ? this.#trace.samples.length : 0) >= this.#limit) {
        this.#queueFull();
        return;
      }
      this.#lastPeriodic = timestamp;
      this.#periodic.push([timestamp, frames]);
    }

    // queueFull fires samplebufferfull, once, in a task of its own.
    #queueFull() {
      if (this.#fullQueued) return;
      this.#fullQueued = true;
      setTimeout(() => this.dispatchEvent(new Event("samplebufferfull")), 0);
    }

    #take(timestamp, stack) {
      if (this.#state !== "started") return false;
      const t = this.#trace;
      if (t.samples.length >= this.#limit) {
        // The buffer is full: queue samplebufferfull (once) and take no
        // more samples. The trace stays reachable through stop() (see
        // polyfill/doc.go: the spec's "move the state to stopped" would
        // make stop() reject and lose it).
        this.#state = "full";
        started.delete(this);
        this.#queueFull();
        return false;
      }
      const sample = { timestamp };
      if (stack !== undefined) {
        const id = this.#stackID(stack);
        if (id !== undefined) sample.stackId = id;
      }
      t.samples.push(sample);
      return true;
    }

    // get a stack ID: fold the frames, outermost first, into stack entries.
    #stackID(stack) {
      const t = this.#trace;
      const k = this.#keys;
      let parentId;
      for (const f of stack) {
        const frame = { name: f.name };
        if (f.url !== undefined) {
          frame.resourceId = elementID(t.resources, k.resources, f.url, f.url);
          if (f.line !== undefined) frame.line = f.line;
          if (f.column !== undefined) frame.column = f.column;
        }
        const frameId = elementID(t.frames, k.frames, JSON.stringify([frame.name, frame.resourceId, frame.line, frame.column]), frame);
        const entry = parentId === undefined ? { frameId } : { parentId, frameId };
        parentId = elementID(t.stacks, k.stacks, frameId + "/" + (parentId ?? ""), entry);
      }
      return parentId;
    }
  }

  // Stack parsing. Lines of V8 ("    at name (url:line:col)", "    at
  // url:line:col"), JavaScriptCore's and SpiderMonkey's
  // ("name@url:line:col", "@url:...", "name@[native code]") Error stacks,
  // innermost first. V8 and SpiderMonkey name accessors "get x" and
  // "set x"; JavaScriptCore's stacks name them "x" (the periodic samples,
  // from its sampling profiler, say "get x").
  const location = /^(.*):(\d+):(\d+)$/;
  const anonymous = new Set(["", "<anonymous>", "global code", "module code", "eval code", "eval"]);
  function parseLine(line) {
    let name, where;
    const v8 = /^\s*at (?:(.*?) \((.*)\)|(.*))$/.exec(line);
    if (v8) {
      name = v8[1] ?? "";
      where = v8[2] ?? v8[3];
      name = name.replace(/^(?:async |new )/, "");
      // "Type.<anonymous>" is an anonymous function called as a method.
      if (name.endsWith(".<anonymous>")) name = "";
    } else {
      const at = line.lastIndexOf("@");
      if (at < 0) return undefined; // V8's "Error" header, blank lines
      name = line.slice(0, at);
      where = line.slice(at + 1);
    }
    if (anonymous.has(name)) name = "";
    // SpiderMonkey names a script a document made (eval, a script
    // element's text) "DOCUMENT_URL line N > eval": the document's.
    where = where.replace(/ line \d+ > [^:]*(?=:\d+:\d+$)/, "");
    const m = location.exec(where);
    if (!m) return { name }; // native code, or a script without a URL
    return { name, url: m[1], line: Number(m[2]), column: Number(m[3]) };
  }

  // parseStack turns an Error stack into frames, outermost first, without
  // this polyfill's own frames (everything up to the innermost frame
  // named marker, and skip more frames past it) and without frames of
  // scripts from other origins (the spec's muted-errors check,
  // approximated by origin).
  function parseStack(text, marker = "wdextForceSampleHere", skip = 0) {
    let frames = String(text).split("\n").map(parseLine).filter((f) => f !== undefined);
    const own = frames.findIndex((f) => f.name === marker || f.name.endsWith("." + marker));
    if (own >= 0) frames = frames.slice(own + 1 + skip);
    return frames.filter(ownFrame).reverse();
  }

  // ownFrame: a frame of a script of this realm's origin, or a named
  // frame without a script (a builtin).
  function ownFrame(f) {
    if (f.url === undefined) return f.name !== "";
    try {
      return new URL(f.url).origin === g.location.origin;
    } catch (e) {
      return false;
    }
  }

  // deliver gives the engine's periodic samples to the live profilers and
  // completes the stops waiting for them.
  function deliver(tokens, batch) {
    if (batch && Array.isArray(batch.samples) && live.size > 0) {
      // Each frame: this realm's script, another's, or a builtin (no
      // script), kept only when called from this realm's code (the
      // nearest script frame outside it is ours): the spec's realm check.
      const frames = (batch.frames || []).map((f) => {
        const frame = { name: String(f.name ?? "") };
        if (typeof f.url === "string" && f.url !== "") {
          frame.url = f.url;
          if (f.line > 0) frame.line = f.line;
          if (f.column > 0) frame.column = f.column;
          return { frame, own: ownFrame(frame) };
        }
        return { frame, builtin: frame.name !== "" };
      });
      for (const [epoch, ids] of batch.samples) {
        const stack = [];
        let inOwn = false;
        for (const i of ids) {
          const f = frames[i];
          if (!f) continue;
          if (f.builtin) {
            if (inOwn) stack.push(f.frame);
          } else {
            inOwn = f.own;
            if (f.own) stack.push(f.frame);
          }
        }
        for (const p of live) offer(p, epoch, stack);
      }
    }
    let n = 0;
    for (const token of tokens || []) {
      const done = pending.get(token);
      if (done) {
        pending.delete(token);
        done();
        n++;
      }
    }
    return n;
  }

  let skipNext = false;
  function forceSample() {
    if (skipNext) {
      skipNext = false;
      return 0;
    }
    const ts = now();
    let n = 0;
    for (const p of [...started]) if (take(p, ts)) n++;
    return n;
  }

  // wdextConstructionStack is the stack of the code that constructs a
  // Profiler: its caller's frames, without it and the constructor.
  function wdextConstructionStack() {
    return parseStack(new Error().stack, "wdextConstructionStack", 1);
  }

  function wdextForceSampleHere() {
    const ts = now();
    const stack = parseStack(new Error().stack);
    let n = 0;
    for (const p of [...started]) if (take(p, ts, stack)) n++;
    return n;
  }

  // Interface object and prototype members as WebIDL defines them.
  for (const m of ["sampleInterval", "stopped", "stop"]) {
    const d = Object.getOwnPropertyDescriptor(Profiler.prototype, m);
    d.enumerable = true;
    Object.defineProperty(Profiler.prototype, m, d);
  }
  Object.defineProperty(Profiler.prototype, Symbol.toStringTag, { value: interfaceName, configurable: true });
  Object.defineProperty(Profiler, "name", { value: interfaceName });
  Object.defineProperty(g, interfaceName, { value: Profiler, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(g, FORCE, { value: forceSample, writable: false, configurable: false, enumerable: false });
  Object.defineProperty(g, FORCE_HERE, { value: wdextForceSampleHere, writable: false, configurable: false, enumerable: false });
  Object.defineProperty(g, Symbol.for("wdext.profiler.skipNextForce"), {
    value: () => void (skipNext = true),
    writable: false,
    configurable: false,
    enumerable: false,
  });
  Object.defineProperty(g, Symbol.for("wdext.profiler.parseStack"), { value: parseStack, configurable: true });
  Object.defineProperty(g, Symbol.for("wdext.profiler.setPolicy"), {
    value: (allowed) => {
      if (policy === undefined) policy = Boolean(allowed);
      return policy;
    },
  });
  Object.defineProperty(g, Symbol.for("wdext.profiler.policy"), { get: () => policy });
  Object.defineProperty(g, Symbol.for("wdext.profiler.enableSampler"), { value: () => void (sampler = true) });
  Object.defineProperty(g, Symbol.for("wdext.profiler.deliver"), { value: deliver });
})
