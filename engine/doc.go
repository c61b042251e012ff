// Package engine is the seam between wdext's extension commands and the
// browsers behind them, the way geckodriver keeps its webdriver crate apart
// from Marionette.
//
// When a session is created, the upstream that created it binds an Engine
// to it (a Binder, run on the new-session reply). A command asks the
// session's engine for the one capability it needs — a Sampler, a
// MemoryMeasurer, a HeapSource, … — with Need, and never asks which engine
// it is; an engine that lacks the capability is answered as "unsupported
// operation" here, naming what is missing and, where the engine says, why.
//
// The engines live beside this package, one folder each (engine/chromium,
// engine/webkitgtk), with their protocol clients beneath them. Adding an
// engine is adding a folder and registering its Binder where wdext builds
// its upstreams (cmd/wdext); no command changes.
package engine
