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
//	next-segment.prep                      the spare segment being prepared
//	                                       (only with Prealloc); never a
//	                                       segment, removed at open and close
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
// Append encodes its frame into the filling staging buffer under the mutex.
// Whoever holds the commit turn swaps the two staging buffers (each kept
// up to 4 MiB), writes and fsyncs the detached one without holding the
// mutex, and completes the batch: appenders arriving during an fsync form
// the next batch. An appender that finds the turn free takes it and
// commits on its own goroutine (a quiet node pays no hand-off to a loop
// and back); one that finds a commit in flight pokes the sync loop
// (capacity-1 channel, non-blocking send) and waits on the batch. The sync
// loop wakes on the poke or a 10 ms backstop and takes the turn once the
// commit in flight ends. A frame that would push the active segment past
// 64 MiB marks a roll; the committer writes and syncs what precedes it,
// closes the segment, exclusive-creates the next one (base = that frame's
// sequence) and fsyncs the directory before writing to it. The context
// counts only until a record is staged.
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
//     next_seq = max(max seq + 1, last segment base). A last segment that
//     ends in the preparation trailer has its data end where its frames
//     stop and zeros run to the limit; non-zero bytes there are a torn run,
//     accepted even with valid frames among them when none starts more than
//     16 MiB after the bad frame (spec 2.7), and zeroed and fsynced (the file
//     stays prepared). A valid frame farther away, or a trailer on a sealed
//     segment, fails Open.
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
// # Segment preparation (Options.Prealloc, storage.ingress_wal_prealloc)
//
// Off by default; off, nothing below happens and the files are as above.
// On, once the active segment holds half its 64 MiB, a background goroutine
// creates next-segment.prep, writes 64 MiB of zeros (real writes, so the
// blocks are allocated), then a 16-byte trailer at offset 64 MiB, and
// fdatasyncs it:
//
//	0                                64 MiB         +8             +16
//	+--------------------------------+--------------+--------------+
//	| zeros; frames overwrite them   | "NWPREP01"   | limit u64 BE |
//	| from offset 0                  |              | (= 64 MiB)   |
//	+--------------------------------+--------------+--------------+
//
// The limit is the offset the trailer starts at, so a file is prepared only
// when its last 16 bytes name its own size - 16. The roll renames a finished
// spare into place (refusing to replace an existing segment) and fsyncs the
// directory before writing to it; with no finished spare it creates an empty
// segment as before, and a spare still being made waits for a later roll.
// Appends then overwrite allocated blocks, so fdatasync never changes the
// file size. A prepared segment is written and fsynced in runs of whole
// frames of at most 16 MiB (one run when a single frame is larger), so a
// crash tears at most one run. The roll that seals a prepared segment first
// truncates it to its data end and fsyncs, so sealed segments are ordinary.
// A piece that would reach the trailer (a segment prepared under another
// segment size) first turns the segment ordinary the same way. A failed
// preparation only removes its file; the WAL is not latched. Readers and
// replay use the data end, never the file size: ReadFrom reads the active
// segment up to its durable data end. Close stops a running preparation
// and removes the spare. Cost: up to two extra segments of disk.
//
// # Benchmarks
//
// On the real filesystem (ext4 on a 2-core AMD EPYC VM shared with other
// builds, so single runs vary by 2x; figures are the median of three
// interleaved runs), with 256-byte payloads. prealloc=on writes into a
// prepared segment from the start; cpu-µs/fsync is the process's user+sys
// time (every goroutine) per segment fsync:
//
//	go test ./adapters/wal -run '^$' -bench Append -benchmem -benchtime=2s
//
//	                               prealloc=off              prealloc=on
//	                            records/s  cpu-µs/fsync   records/s  cpu-µs/fsync   fsyncs/record
//	BenchmarkAppend appenders=1     2,769      70           5,962      40           1.000
//	BenchmarkAppend appenders=16   25,442      62          61,342      45           0.125
//	BenchmarkAppend appenders=64  123,143      94         140,727      72           0.031
//	BenchmarkAppend appenders=256 306,445     210         311,266     167           0.0078
//	BenchmarkAppendMany (16x100)  647,133                 606,848
//
// Allocations are unchanged by the option (Append 248 B/op 3 allocs/op with
// one appender, 0 allocs/op above). An fsync that does not change the file
// size skips the inode update, so at low concurrency (fsync-bound) the
// option roughly doubles records/s; with large group commits (AppendMany)
// the fsync count is already small and it makes no measurable difference.
//
//	go test ./adapters/wal -run '^$' -bench ReadFrom -benchmem -benchtime=2s
//
//	                                 before read cache        with it
//	BenchmarkReadFromSmall (8/call)  43-61 µs/op, 23 allocs   20-29 µs/op, 19 allocs
//	BenchmarkReadFrom (256/call)     150-245 µs/op, 519 allocs  160-280 µs/op, 515 allocs (noise)
//
// # Reads
//
// ReadFrom keeps one cached read-only descriptor: the segment it last read
// (the dispatcher reads the active one on every wake), reference counted so
// a read in flight keeps it open; reading another segment replaces it,
// compaction drops it before deleting its segment, Close drops it for good.
// The data end comes from memory (the active segment's durable end, a
// sealed segment's end recorded at seal or replay), never from an fstat. A
// segment remembers where the last read stopped, so a read that goes on
// from there does not walk from the sparse index entry; the read window
// starts at 16 KiB and grows to 256 KiB. A read that finds its segment
// removed by compaction starts over from the oldest kept record.
package wal
