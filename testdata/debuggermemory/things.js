// Allocations with known sites for the debuggermemory tests.
class Foo {
  constructor(i) { this.i = i; }
}
self.foos = [];
// makeFoos keeps n more instances of class Foo reachable from the global.
function makeFoos(n) {
  for (let i = 0; i < n; i++) self.foos.push(new Foo(i));
  return self.foos.length;
}
// makeThings allocates n small objects, keeps every tenth and drops the rest.
self.things = [];
function makeThings(n) {
  for (let i = 0; i < n; i++) {
    const o = { thing: i, tag: "t" };
    if (i % 10 === 0) self.things.push(o);
  }
  return self.things.length;
}
class Early {
  constructor(i) { this.i = i; }
}
self.early = [];
// makeEarly keeps n instances of class Early (made before tracking starts).
function makeEarly(n) {
  for (let i = 0; i < n; i++) self.early.push(new Early(i));
  return self.early.length;
}
// churn allocates about mb megabytes of short-lived strings and objects.
function churn(mb) {
  let keep = null;
  for (let i = 0; i < mb * 1024 * 16; i++) keep = { s: "x" + i, prev: i % 64 ? keep : null };
  return keep !== null;
}
