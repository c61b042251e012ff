// Instances of a class only the worker makes; says so when done.
class InWorker { constructor(i) { this.i = i; } }
self.inWorker = [];
for (let i = 0; i < 200; i++) self.inWorker.push(new InWorker(i));
postMessage("ready");
