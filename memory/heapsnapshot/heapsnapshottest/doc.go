// Package heapsnapshottest writes synthetic V8 heap snapshots, shaped like
// Chromium's, for tests and benchmarks: Write makes big uniform ones, and
// a Graph is a small one built node by node, edge by edge.
package heapsnapshottest
