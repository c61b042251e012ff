// wdext's testdriver.js: the test_driver API of web-platform-tests, for the
// actions the js-self-profiling and measure-memory suites use, performed by
// the wdext wpt runner through WebDriver.
//
// test_driver.force_sample() returns a promise that settles once every
// started Profiler of the session has taken one sample (the WebDriver
// "Force Sample" command, through wdext). RFC 81 also asks for a
// synchronous form whose sample carries the caller's stack; on Chromium 156
// that cannot be done exactly (see forcesample/doc.go), so the sample is the
// browser's own but has no page frames on its stack.
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
    set_test_context() {},
    message_test(message) {
      window.top.postMessage(message, "*");
      return Promise.resolve();
    },
  };
  window.test_driver_internal = window.test_driver;
})();
