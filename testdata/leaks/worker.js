// frames.html's dedicated worker: 1 WorkerThing kept a round.
class WorkerThing {
  constructor(i) { this.i = i; }
}
self.kept = [];
onmessage = (e) => {
  if (e.data !== "leak") return;
  kept.push(new WorkerThing(kept.length));
  postMessage("leaked");
};
