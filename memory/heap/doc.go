// Package heap owns the engine-neutral view of a heap snapshot that a
// census counts (Heap, with its node kinds): V8's and JavaScriptCore's
// snapshots are read into it by memory/census's adapters, and an engine
// hands one out (engine.Heap) without its readers or the census coming
// along.
package heap
