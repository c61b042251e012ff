// The README example page's worker: keeps some objects, then says so.
self.data = Array.from({ length: 200000 }, (_, i) => ({ i }));
postMessage("ready");
