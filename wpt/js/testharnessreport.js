// wdext's testharnessreport.js: hands testharness.js results, and the
// testdriver actions a test asks for, to the wdext wpt runner, which waits
// for them with an asynchronous WebDriver script (window.__wdext.wait).
//
// For wdext wpt --html it also hands over, with the result, what the test
// attached (test_driver.wdext_attach: traces, memory results) and when
// each test_driver.force_sample() ran (so the report can mark forced
// samples), and, when the runner captures (Runner.Capture), every trace a
// Profiler's stop() resolves with and every
// performance.measureUserAgentSpecificMemory() result in this document.
(function () {
  "use strict";
  const state = { result: null, actions: [], waiter: null, pending: new Map(), next: 1 };
  const CAPTURE = __WDEXT_CAPTURE__;
  const MAX_ATTACHED = 32 << 20; // characters of JSON, in all
  const attached = { list: [], size: 0, forced: [] };
  const epoch = () => performance.timeOrigin + performance.now();

  // attach keeps a copy of value (as JSON, now) for the report.
  function attach(kind, name, value, timeOrigin) {
    let data;
    try {
      data = JSON.stringify(value);
    } catch (e) {
      data = undefined;
    }
    if (data === undefined) data = JSON.stringify("wdext_attach: the value cannot be written as JSON");
    if (attached.size + data.length > MAX_ATTACHED) {
      kind = "error";
      data = JSON.stringify("wdext_attach: dropped, the test's attachments passed 32 MB");
    }
    attached.size += data.length;
    attached.list.push({ kind: String(kind), name: String(name), data, timeOrigin: timeOrigin || performance.timeOrigin });
  }

  // The subtest under way (the last one started), to name what is
  // captured.
  let running = "";
  function current() {
    return running;
  }

  // wrap replaces obj[name] by a method that returns what the original
  // returns (the same promise) and, once it fulfils, captures the value.
  function wrap(obj, name, kind, label) {
    const d = obj && Object.getOwnPropertyDescriptor(obj, name);
    if (!d || typeof d.value !== "function") return;
    const original = d.value;
    let n = 0;
    const method = {
      [name]() {
        const p = original.apply(this, arguments);
        const sub = current();
        if (p && typeof p.then === "function") {
          p.then((v) => attach(kind, label + " " + ++n + (sub ? " (" + sub + ")" : ""), v), () => {});
        }
        return p;
      },
    }[name];
    Object.defineProperty(obj, name, Object.assign({}, d, { value: method }));
  }
  if (CAPTURE) {
    if (typeof Profiler === "function") wrap(Profiler.prototype, "stop", "trace", "Profiler trace");
    if (typeof Performance === "function") {
      wrap(Performance.prototype, "measureUserAgentSpecificMemory", "measurement", "measureUserAgentSpecificMemory()");
    }
  }

  function flush() {
    if (!state.waiter) return;
    let message;
    if (state.result) {
      message = { type: "complete", payload: state.result, attachments: attached.list, forced: attached.forced };
    } else if (state.actions.length) {
      message = Object.assign({ type: "action" }, state.actions.shift());
    } else {
      return;
    }
    const done = state.waiter;
    state.waiter = null;
    done(JSON.stringify(message));
  }

  window.__wdext = {
    // wait is called by the runner; done is its WebDriver callback.
    wait(done) {
      state.waiter = done;
      flush();
    },
    // action queues a testdriver action for the runner to perform.
    action(name, args) {
      return new Promise((resolve, reject) => {
        const id = state.next++;
        state.pending.set(id, { resolve, reject, name, start: epoch() });
        state.actions.push({ id, action: name, args });
        flush();
      });
    },
    // attach keeps a result for the HTML report (test_driver.wdext_attach).
    attach,
    // settle is called by the runner once an action is done.
    settle(id, error) {
      const p = state.pending.get(id);
      if (!p) return;
      state.pending.delete(id);
      if (p.name === "force_sample" && !error) attached.forced.push([p.start, epoch()]);
      if (error) p.reject(new Error(error));
      else p.resolve();
    },
  };

  setup({ output: false, timeout_multiplier: __WDEXT_TIMEOUT_MULTIPLIER__ });
  add_test_state_callback(function (t) {
    if (t.phase === t.phases.STARTED) running = t.name;
  });
  add_completion_callback(function (tests, status) {
    const clean = (s) => (s === undefined || s === null ? null : String(s));
    state.result = {
      status: { status: status.status, message: clean(status.message), stack: clean(status.stack) },
      tests: tests.map((t) => ({ name: t.name, status: t.status, message: clean(t.message), stack: clean(t.stack) })),
    };
    flush();
  });
})();
