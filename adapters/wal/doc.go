// Package wal is the node's ingress write-ahead log (spec internals.md
// section 2): every 202 stands on a record this package fsynced. It
// implements ports.IngressWAL on top of vfs.FS and owns the directory it is
// opened on (<data>/ingress/produce): the segment files, the checkpoint file,
// group commit, the disk failure latch, rotation, replay on boot and
// compaction. It never decodes more than it must, never writes after a disk
// failure, and never deletes a record at or above the durable checkpoint.
//
// # Files
//
//	<20-digit zero-padded base seq>.wal   segments; base = first sequence the
//	                                       segment may hold; sequences are
//	                                       dense from 0 across segments
//	checkpoint                             exactly 8 bytes: u64 first sequence
//	                                       not yet committed (missing = 0)
//
// # Frame
//
// All integers big-endian. Header 20 bytes; a frame never spans segments.
//
//	 0       4       8               16      20
//	+-------+-------+---------------+-------+---------------------------+
//	| magic | len   | seq           | crc   | payload (len bytes)       |
//	| u32   | u32   | u64           | u32   |                           |
//	+-------+-------+---------------+-------+---------------------------+
//	magic = 0x4E57414C ("NWAL"); 1 <= len <= 16 MiB; crc = CRC-32 IEEE of
//	the payload. The payload is one record.
//
// # Record payload
//
// str and bytes are a u32 length followed by that many bytes.
//
//	format 1 (no topic id):
//	| u8 1 | str topic | str key | u32 partition | u64 created_at_ms | bytes payload |
//	format 2 (topic id set, written as 16 lowercase hex characters):
//	| u8 2 | str topic | str topic_id | str key | u32 partition | u64 created_at_ms | bytes payload |
//
// Decoders accept both formats, and refuse unknown formats, truncation,
// trailing bytes and anything the encoder could not have written (empty topic
// or payload, partition above 2^31-1, format 2 without a topic id). A length
// field is checked against the bytes present before any allocation.
//
// # Group commit
//
// Append encodes its frame into the filling staging buffer under the mutex,
// pokes the single sync loop (capacity-1 channel, non-blocking send) and
// waits on the batch. The sync loop wakes on the poke or a 10 ms backstop,
// swaps the two staging buffers (each kept up to 4 MiB), writes and fsyncs
// the detached one without holding the mutex, and completes the batch:
// appenders arriving during an fsync form the next batch. A frame that would
// push the active segment past 64 MiB marks a roll; the sync loop writes and
// syncs what precedes it, closes the segment, exclusive-creates the next one
// (base = that frame's sequence) and fsyncs the directory before writing to
// it. The context counts only until a record is staged.
//
// # Crash safety
//
//   - An append returns only after the fsync covering its frame; a batch is
//     acked as a whole. A crash keeps a prefix of what was staged, never a gap.
//   - A failed write, fsync or segment create latches the WAL: the in-flight
//     batch and every later append fail with domain.ErrWALFailed, and nothing
//     is written again until a reopen rescans the files (Failed reports it).
//   - Replay scans every segment in order. In the last segment, damage is a
//     torn tail only when no complete valid frame (magic, length, CRC,
//     sequence at or past the expected one) follows it, found by a magic
//     search in 4 KiB chunks; the tail is then truncated and fsynced. Damage
//     followed by a valid frame, damage in an earlier segment or a sequence
//     gap fail Open with a *CorruptionError naming the file and byte offset.
//     next_seq = max(max seq + 1, last segment base).
//   - The checkpoint is overwritten in place at once (a process crash keeps
//     it) and fdatasynced by a background flusher within 250 ms and at Close
//     (a machine crash keeps it after that). It is created by temp file,
//     fsync, rename and directory fsync. A checkpoint above next_seq refuses
//     the open. Compaction uses only the durably flushed value: it rolls a
//     fully committed active segment of 1 MiB or more to an empty segment at
//     next_seq, and deletes, oldest first with a directory fsync after each,
//     every non-active segment whose successor's base is at or below it.
//
// # Assumptions
//
//   - fdatasync makes the data written before it durable, and a directory
//     fsync makes created and removed names durable; a disk that lies about
//     either can lose acked records.
//   - A crash can tear only data not yet synced, which is always the tail of
//     the last segment: sealed segments are synced before the next is made.
//   - One process opens a WAL directory at a time (the caller's data
//     directory lock guarantees it).
//   - Silent corruption of synced frames is detected (CRC), never repaired:
//     Open and ReadFrom fail loudly rather than skip a record.
//
// # Not built
//
// The opt-in segment preallocation of spec 2.6 (next-segment.prep and the
// NWPREP01 trailer) is not implemented; such files are ignored by replay.
//
// # Benchmarks
//
// On the real filesystem (2-core AMD EPYC VM shared with other builds, so
// runs vary by about 30 %; one segment fsync costs 0.15-0.2 ms), with
// 256-byte payloads:
//
//	go test ./adapters/wal -run '^$' -bench . -benchmem -benchtime=2s
//
//	BenchmarkAppend/appenders=1        4,777 records/s  1.000  fsyncs/record   248 B/op  3 allocs/op
//	BenchmarkAppend/appenders=16      32,180 records/s  0.129  fsyncs/record    32 B/op  0 allocs/op
//	BenchmarkAppend/appenders=64     124,183 records/s  0.032  fsyncs/record     8 B/op  0 allocs/op
//	BenchmarkAppend/appenders=256    331,631 records/s  0.0079 fsyncs/record    2 B/op  0 allocs/op
//	BenchmarkAppendMany (16 x 100) 1,097,474 records/s                      1086 B/op  1 allocs/op
//	BenchmarkReadFrom (256/call)   1,944,503 records/s                    104 KB/op  520 allocs/op
package wal
