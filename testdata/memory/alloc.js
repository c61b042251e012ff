// keep(mb) allocates an mb MB ArrayBuffer, writes every page of it so that
// it is resident, and keeps it reachable from the global object.
self.kept = [];
function keep(mb) {
  if (!mb) return;
  const buf = new ArrayBuffer(mb * 1024 * 1024);
  const view = new Uint8Array(buf);
  for (let i = 0; i < view.length; i += 4096) view[i] = 1;
  self.kept.push(buf);
}
