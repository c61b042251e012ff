// wdext's Debugger (process.js), asked from the page's content process in
// Marionette's system sandbox. The arguments are the operation, its
// argument, where it runs, and how long the processes have: "settings"
// sets the session's memory settings (arg) in every process; "page" runs
// op in the page's process; "all" in every content process, and a number
// in the process of that pid, through the hub in the parent: the answer
// is then {asked: id}, and "answered" with arg id gives the answers once
// every process has given its own, or wait ms have passed (null until
// then). A script that waited for them would be held to the client's
// script timeout.
//
// Answers are JSON strings, {top, asker, answers: [{pid, remoteType,
// value | error}]}, top being the id of the page's top-level browsing
// context and asker the pid of the process that asked:
// Marionette clones a result object member by member, which takes minutes
// for a log of 600,000 entries (measured), and a string at once.
const [op, arg, scope, wait] = arguments;
const wd = Services.wdextDebugger;
if (!wd) {
  throw new Error("wdext's Debugger is not in this content process (its process script did not run)");
}
// The current window's top-level browsing context: the page's tab.
const top = window.browsingContext.top.id;
switch (scope) {
case "settings":
  return JSON.stringify(wd.settings(arg));
case "answered": {
  const r = Services.cpmm.sendSyncMessage("wdext:answered", arg)[0] ?? null;
  return r === null || r.error ? r && JSON.stringify(r) : wd.reply(r.top, r.asker, r.answers);
}
case "page":
case Services.appinfo.processID:
  return wd.here(op, arg, top);
default: {
  const id = Services.uuid.generateUUID().toString();
  Services.cpmm.sendAsyncMessage("wdext:ask", {id, op, arg, top, wait, pid: scope === "all" ? 0 : scope});
  return JSON.stringify({asked: id});
}
}
