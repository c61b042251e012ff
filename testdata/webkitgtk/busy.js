// Busy work for the periodic-sampling tests: spin runs the CPU for ms
// milliseconds; Thing's accessors spin too. No "return spin(...)" in
// strict code (a class body): JavaScriptCore makes that a proper tail
// call, and the caller's frame is gone from the stack.
function spin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  return x;
}
class Thing {
  get someValue() {
    const v = spin(this.ms);
    return v;
  }
  set someValue(ms) {
    this.ms = ms;
    spin(ms);
  }
}
function busyAccessors(ms) {
  const t = new Thing();
  t.someValue = ms;
  return t.someValue;
}
