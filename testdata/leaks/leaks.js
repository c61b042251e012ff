// The leak check's test scenarios. round() is one iteration: leaky.html
// plants one leak of every kind the leak check reports; clean.html runs
// the same code minus the leaks. Both make garbage, a one-time singleton
// and a DOM node added and removed each iteration.

class Foo {
  constructor(i) { this.i = i; }
}
class Singleton {
  constructor() { this.made = Date.now(); }
}

window.store = [];   // Foo objects, 3 per leaky iteration
window.dialogs = []; // detached divs, 1 per leaky iteration
window.cache = new Map(); // 2 entries per leaky iteration; 1 overwritten in place when clean
let singleton = null;
let rounds = 0;

function makeFoos() {
  for (let k = 0; k < 3; k++) store.push(new Foo(rounds * 3 + k));
}

function openDialog() {
  const d = document.createElement('div');
  d.className = 'dialog';
  document.body.appendChild(d);
  d.remove(); // closed, but still held
  dialogs.push(d);
}

function listen() {
  window.addEventListener('resize', () => { rounds++; });
}

function remember() {
  cache.set('a' + rounds, rounds);
  cache.set('b' + rounds, rounds);
}

function churn() {
  const garbage = [];
  for (let k = 0; k < 200; k++) garbage.push({ k, s: 'x' + k });
  return garbage.length;
}

function theSingleton() {
  if (!singleton) singleton = new Singleton();
  return singleton;
}

function flash() {
  const n = document.createElement('span');
  n.textContent = 'flash';
  document.body.appendChild(n);
  n.remove();
}

function round() {
  rounds++;
  churn();
  theSingleton();
  flash();
  if (window.leaky) {
    makeFoos();
    openDialog();
    listen();
    remember();
  } else {
    cache.set('last', rounds); // overwritten in place
  }
}
