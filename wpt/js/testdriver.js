// wdext's testdriver.js: the test_driver API of web-platform-tests, for the
// actions the js-self-profiling and measure-memory suites use, performed by
// the wdext wpt runner through WebDriver.
//
// test_driver.force_sample() returns a promise that settles once every
// started Profiler of the session has taken one sample (the WebDriver
// "Force Sample" command, through wdext), as WPT's own testdriver does.
// RFC 81 also has the sample carry the caller's stack: with wdext's
// Profiler polyfill (WebKitGTK, Firefox) the caller's realm samples
// synchronously with it. On Chromium it does so only in a stack-samples
// run (wdext wpt --stack-samples), where console.timeStamp() samples, and
// so does every callback; otherwise the sample is the browser's own, with
// no page frames on its stack (see docs/forcesample.md).
(function () {
  "use strict";
  const top = () => {
    try {
      if (window.top.__wdext) return window.top.__wdext;
    } catch (e) {}
    if (window.__wdext) return window.__wdext;
    throw new Error("testdriver: this page was not loaded by wdext wpt");
  };

  let nextId = 1;
  // A selector the runner can find the element by, from the top document.
  function selectorFor(element) {
    if (element.ownerDocument !== window.top.document) {
      throw new Error("testdriver: only elements of the top document are supported");
    }
    if (!element.id) element.id = "wdext-testdriver-" + nextId++;
    return "#" + CSS.escape(element.id);
  }

  window.test_driver = {
    force_sample() {
      // Where Profiler is wdext's polyfill (WebKitGTK), this realm's
      // profilers take their sample right here, synchronously, with the
      // caller on the stack (RFC 81); the session-wide force that follows
      // then skips this realm, so every profiler still gets exactly one.
      const here = globalThis[Symbol.for("wdext.profiler.forceSampleHere")];
      if (typeof here === "function") {
        here();
        globalThis[Symbol.for("wdext.profiler.skipNextForce")]();
      } else if (globalThis[Symbol.for("wdext.testdriver.stackSamples")]) {
        // A stack-samples session traces for its whole length, so this
        // samples this realm's isolate now, with the caller on the stack;
        // the mark makes the session-wide force skip the isolate.
        console.timeStamp("wdext force_sample");
        globalThis[Symbol.for("wdext.forcesample.sampledHere")] = true;
      }
      return top().action("force_sample", {});
    },
    click(element) {
      return top().action("click", { selector: selectorFor(element) });
    },
    send_keys(element, keys) {
      return top().action("send_keys", { selector: selectorFor(element), keys: String(keys) });
    },
    bless(intent, action) {
      const button = document.createElement("button");
      button.textContent = "wdext: " + (intent || "bless");
      document.body.appendChild(button);
      return new Promise((resolve) => {
        button.addEventListener("click", () => resolve(action ? action() : undefined), { once: true });
        window.test_driver.click(button);
      }).finally(() => button.remove());
    },
    // wdext_attach(kind, name, value) hands a result over to the wdext
    // wpt --html report, drawn with the test: kind "trace" (what
    // profiler.stop() resolved with; its samples forced by
    // force_sample() are marked), "measurement"
    // (performance.measureUserAgentSpecificMemory()'s result), "census"
    // or "leaks" (wdext's memory commands' results); anything else is
    // shown as JSON. value is copied as JSON now. A trace is read on this
    // realm's clock (performance.timeOrigin): attach a worker's or
    // another frame's trace from there, or pass its timeOrigin. Not a
    // WPT API: guard calls with if (test_driver.wdext_attach).
    wdext_attach(kind, name, value, timeOrigin) {
      top().attach(kind, name, value, timeOrigin || performance.timeOrigin);
      return Promise.resolve();
    },
    set_test_context() {},
    message_test(message) {
      window.top.postMessage(message, "*");
      return Promise.resolve();
    },
  };
  window.test_driver_internal = window.test_driver;
})();
