// Package schedule holds the pure rules of per-message delayed delivery:
// which time bucket a deliver-at falls in, and the state of one partition's
// schedule (the bucket files it holds, the one bucket loaded because it is
// due, and which of its records are due). It does no I/O: the partition log
// adapter persists buckets and releases what Due hands out.
package schedule
