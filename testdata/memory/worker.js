// A dedicated worker: ?mb=N keeps an N MB ArrayBuffer alive, then tells its
// owner it is ready; ?busy=S then keeps its thread busy for S seconds
// (never yielding to its event loop).
//
// Messages: "weak" drops a fresh object, keeping only a WeakRef to it;
// "collected?" answers whether it has been garbage collected since.
importScripts("alloc.js");
const q = new URLSearchParams(location.search);
keep(Number(q.get("mb") || 0));
let weak;
onmessage = (e) => {
  if (e.data === "weak") {
    weak = new WeakRef({ junk: new Array(1000).fill(0) });
    postMessage("weak");
  } else if (e.data === "collected?") {
    postMessage(weak.deref() === undefined);
  }
};
postMessage("ready");
if (q.has("busy")) {
  const end = Date.now() + 1000 * Number(q.get("busy"));
  while (Date.now() < end) {}
}
