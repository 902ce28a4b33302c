// Package offsetstore persists each local partition's consumer frontier and
// acked-ahead set (internals.md §5.8) in the partition's directory, beside
// adapters/segmentlog's segments. It implements ports.OffsetStore over
// vfs.FS and never uses package os. It never creates a directory and never
// writes into a directory that does not belong to the partition's topic
// incarnation; it holds no consumer leases (a crash means redelivery).
//
// # Format
//
//	<data>/topics/<topic>/p<NNNNN>/
//	    consumer.ahead    two 4 KiB slots: the anchor and the window
//	    consumer.offset   8 bytes: the frontier, big-endian int64 (-1 none)
//
// A slot (all integers big-endian):
//
//	offset  size  field
//	     0     4  magic "NCOA"
//	     4     1  version 1
//	     5     3  reserved, zero
//	     8     8  generation (uint64 > 0; the newer record is the larger)
//	    16     8  frontier (int64 >= -1: every offset at or below is settled)
//	    24     4  count of acked-ahead offsets
//	    28     4  body length in bytes (<= 4060)
//	    32     …  body: count uvarint deltas, ascending, each >= 1, the first
//	              from the frontier; the rest of the slot is zero
//	  4092     4  CRC-32C (Castagnoli) over bytes [0, 4092)
//
// A set too large for a slot keeps its lowest offsets; the rest are
// redelivered. consumer.offset is an 8-byte write in place; an empty or
// short file reads as no offset.
//
// # Protocol
//
//   - Prime (first Write after start or Forget): check that the partition
//     directory exists and that the topic's incarnation marker names the
//     ref's id, open consumer.ahead (creating the file, never the
//     directory), extend it to 8 KiB, anchor on the newest valid slot, sync
//     the file and the directory (an earlier process may have died between
//     creating a file and syncing its entry), then check the marker
//     again: a directory replaced meanwhile strands the partition.
//   - Write: encode the record with generation anchor+1 into the window slot
//     through the held descriptor. No sync.
//   - Sync: fdatasync; on success the window becomes the anchor. On failure
//     the anchor is untouched and the next Write rewrites the window in full.
//   - Level: open (or create) consumer.offset in the primed directory, check
//     the marker again, write 8 bytes at 0, sync, close.
//   - Load: the newest valid slot and consumer.offset; the larger frontier
//     wins, and only acked-ahead offsets above it are kept.
//
// # Crash Safety
//
//   - Every record holds only values the caller settled, so no crash
//     recovers a frontier past an ack; a crash loses at most the records
//     written since the last Sync (machine crash) or nothing (process crash:
//     the page cache keeps the window, and priming makes it durable before
//     the other slot is overwritten).
//   - A window torn by power loss fails its checksum; recovery uses the
//     anchor, which is never written while it is the anchor.
//   - A partition whose directory vanished or now belongs to another topic
//     incarnation is stranded: nothing is written until Forget. Held
//     descriptors follow their file through a quarantine rename, so a late
//     write lands in the retired copy, never in a successor's directory
//     (story F29).
//
// # Assumptions
//
//   - adapters/segmentlog stamps the topic's incarnation marker before it
//     creates partition directories, and an incarnation's directory is
//     created once (a retired id is never served again).
//   - An 8-byte write at offset 0 is atomic (one sector).
//   - One committer drives the store: calls on one partition never overlap.
//
// # Not here
//
// Sizing the descriptor cap from RLIMIT_NOFILE is the caller's (Options);
// when every held descriptor has an unsynced window the cap is exceeded
// until one is synced, instead of writing through a one-shot descriptor.
// The post-upgrade bulk priming with one device flush is not implemented
// (each partition primes with its own sync).
package offsetstore
