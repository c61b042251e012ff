// wdext's testharnessreport.js: hands testharness.js results, and the
// testdriver actions a test asks for, to the wdext wpt runner, which waits
// for them with an asynchronous WebDriver script (window.__wdext.wait).
(function () {
  "use strict";
  const state = { result: null, actions: [], waiter: null, pending: new Map(), next: 1 };

  function flush() {
    if (!state.waiter) return;
    let message;
    if (state.result) {
      message = { type: "complete", payload: state.result };
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
        state.pending.set(id, { resolve, reject });
        state.actions.push({ id, action: name, args });
        flush();
      });
    },
    // settle is called by the runner once an action is done.
    settle(id, error) {
      const p = state.pending.get(id);
      if (!p) return;
      state.pending.delete(id);
      if (error) p.reject(new Error(error));
      else p.resolve();
    },
  };

  setup({ output: false, timeout_multiplier: __WDEXT_TIMEOUT_MULTIPLIER__ });
  add_completion_callback(function (tests, status) {
    const clean = (s) => (s === undefined || s === null ? null : String(s));
    state.result = {
      status: { status: status.status, message: clean(status.message), stack: clean(status.stack) },
      tests: tests.map((t) => ({ name: t.name, status: t.status, message: clean(t.message), stack: clean(t.stack) })),
    };
    flush();
  });
})();
