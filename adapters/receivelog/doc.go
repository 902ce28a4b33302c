// Package receivelog persists each local partition's receive-count table
// (domain/deadletter) in the partition's directory, beside
// adapters/offsetstore's files and adapters/segmentlog's segments, so that
// it moves with the partition. It implements ports.ReceiveLog over vfs.FS
// and never uses package os. It never creates a directory and never writes
// into one that does not belong to the partition's topic incarnation.
//
// # Format
//
//	<data>/topics/<topic>/p<NNNNN>/
//	    consumer.receives      frames, in append order
//	    consumer.receives.tmp  a compaction in progress (ignored, removed)
//
// A frame (integers big-endian):
//
//	size  field
//	   4  body length (<= frameBodyMaxBytes)
//	   4  CRC-32C (Castagnoli) of the body
//	   …  body: kind (1 byte) | offset (uvarint) | count (uvarint) |
//	      reason length (uvarint) | reason bytes
//
// Uvarints are minimal and the body is consumed exactly. Load stops at the
// first frame that is short, fails its checksum, is too long, does not
// decode exactly, or holds a record that is not Valid: that frame and
// everything after it were never acknowledged.
//
// # Protocol
//
//   - Prime (first Append after start or Forget): check that the directory
//     exists and the topic's incarnation marker names the ref's id, open
//     consumer.receives (creating the file, never the directory), check the
//     marker again, remove a leftover .tmp, cut any torn tail, fdatasync
//     (the file may hold records only a crashed process's page cache has)
//     and sync the directory (an earlier process may have died before it
//     synced the file's entry).
//   - Append: all frames in one write at the end of the good data, then one
//     fdatasync. After a failed Append the next one cuts the file back to
//     the good end (and syncs) before it writes.
//   - Compact: write consumer.receives.tmp, fdatasync, rename it over
//     consumer.receives, sync the directory; the descriptor held from then on
//     is the new file's. A crash leaves the old file or the new one, whole.
//     When the directory sync fails, the next Append retries it first; when
//     an earlier step fails, the next Append primes again.
//   - A partition whose directory is missing or belongs to another topic
//     incarnation is stranded: Append and Compact answer domain.ErrLogClosed
//     until Forget, and nothing is created.
package receivelog
