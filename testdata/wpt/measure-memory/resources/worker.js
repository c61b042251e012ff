// A worker holding a known allocation until it is told to stop.
self.keep = new ArrayBuffer(8 * 1024 * 1024);
new Uint8Array(self.keep).fill(1);
postMessage("ready");
