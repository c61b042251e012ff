// Package heapsnapshottest writes synthetic V8 heap snapshots, shaped like
// Chromium's, for tests and benchmarks.
package heapsnapshottest
