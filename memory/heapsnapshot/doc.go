// Package heapsnapshot reads V8 heap snapshots (.heapsnapshot files, or the
// chunks of HeapProfiler.addHeapSnapshotChunk) into a compact, read-only
// graph.
//
// The format is one JSON object: "snapshot" (a header whose "meta" lists the
// fields of each record kind), then "nodes" and "edges" (flat integer arrays,
// len(node_fields) or len(edge_fields) integers per record),
// "trace_function_infos" and "trace_tree" (allocation stacks, filled only
// while allocation tracking is on), "samples", "locations", and "strings",
// the table that name fields index into. Field positions are always taken
// from meta, never assumed. Because "strings" comes last, names are kept as
// indices and resolved on access.
//
// Read consumes the input as it arrives and keeps one slice per field it
// needs (node type, name, id, self size, trace node id, detachedness; edge
// type, name, target), about 18 bytes per node (self sizes in 32 bits,
// the rare larger ones aside) and 9 per edge, less than the JSON they come
// from; ReadNodes, for a census, checks the edges but keeps none. It
// allocates nothing per node, nor per string (strings share
// blocks), and sizes the columns from the header's counts, trusted as far
// as the input read so far (or the file's size) vouches for them. With
// more than one core, it reads "nodes" and "edges" a megabyte at a time,
// in two halves at once, each storing its records in place.
package heapsnapshot
