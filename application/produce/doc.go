// Package produce owns the produce use case end to end: Service accepts
// single and batch produces into the ingress WAL (validation, partition
// choice, the 202 line), the Dispatcher moves durable WAL records to their
// partition owners and advances the WAL checkpoint, and Committer is the
// owner side of a commit (the incarnation and ownership re-checks before
// the partition log's durable commit).
//
// It orchestrates ports only: it never opens a file or a socket, never
// answers HTTP, and never destroys an accepted record except through a
// leader-confirmed discard (application/leaderconfirm). Every failure keeps
// the data.
package produce
