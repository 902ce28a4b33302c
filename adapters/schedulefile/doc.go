// Package schedulefile owns the bucket files of per-message delayed
// delivery: a partition owner keeps each record that must not be delivered
// before its deliver-at time in an append-only bucket file of the
// partition's directory, one file per minute of deliver-at. The package
// holds the file format and the operations on one file (Open, Append,
// Read, MarkFired); locking, indexing, timers and committing released
// records into the partition log are the caller's (adapters/segmentlog).
// Every file access goes through vfs.FS, never package os.
//
// # Format
//
//	<data>/topics/<topic>/p<NNNNN>/
//	    schedule-<startMs>.bucket   frames, in append order; startMs is the
//	                                window's start, unix ms, decimal, unpadded
//
// A frame (integers big-endian):
//
//	size  field
//	   4  body length (1 to frameBodyMaxBytes)
//	   4  CRC-32C (Castagnoli) of the body
//	   …  body: kind (1 byte), then by kind:
//	      1 record  deliver_at_ms (u64, 1 to MaxInt64) | key length (uvarint,
//	                <= 64 KiB) | key | payload length (uvarint, 1 byte to
//	                1 MiB) | payload
//	      2 fired   count (uvarint, 1 to firedFrameOrdinalsMax) |
//	                count × ordinal (uvarint)
//	      3 commit  count (uvarint, >= 1): the record frames of the batch
//	                it closes
//
// Uvarints are minimal and a body is consumed exactly. A record's ordinal
// is its index among the file's record frames, from 0, in file order.
//
// # Protocol
//
//   - Append writes a batch's record frames and one commit frame naming
//     their count in one write, then fdatasyncs. Fired frames go only
//     between batches.
//   - Open reads the frames in order and accepts a record frame only once a
//     whole commit frame closes its batch with the count of record frames
//     since the previous commit (or the start), and a fired frame only
//     after a commit (or at the start) and only with ordinals below the
//     records accepted so far. Duplicate fired ordinals are harmless. The
//     good end is the end of the last accepted commit or fired frame; what
//     follows (a short frame, a bad checksum, a bad body, a batch without
//     its commit, a count mismatch) was never acknowledged, and Open cuts
//     it and fdatasyncs.
//   - MarkFired writes fired frames without fdatasync: a machine crash may
//     lose them and release those records again (at least once); the next
//     Append's fdatasync makes them durable.
//   - After a failed write the next write cuts the file back to the good
//     end; after a failed fdatasync, back to the end of the last good one,
//     writing the fired ordinals anew, since the page cache no longer
//     shows what reached the disk.
//   - Open syncs the directory when it creates the file; a file it did
//     not create has its directory synced before the first Append.
package schedulefile
