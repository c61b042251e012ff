// Package engine is the seam between wdext's extension commands and the
// browsers behind them, the way geckodriver keeps its webdriver crate apart
// from Marionette.
//
// When a session is created, the upstream that created it binds an Engine
// to it (a Binder, run on the new-session reply). A command asks the
// session's engine for the one capability it needs (a Sampler, a
// MemoryMeasurer, a HeapSource, …) with Need, and never asks which engine
// it is; an engine that lacks the capability is answered as "unsupported
// operation" here, naming what is missing and, where the engine says, why.
//
// Rules:
//   - An engine is one folder beside this package (engine/chromium,
//     engine/webkitgtk) that exports one kind.Kind, plus its line in
//     package registry. Nothing outside engine/ names an engine.
//   - Engines import this package and neutral leaf packages (wire, driver,
//     session, memory's algorithms), never a command package (forcesample,
//     memory, webdriver).
//   - This package imports no engine.
package engine
