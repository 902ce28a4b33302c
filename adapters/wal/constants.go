package wal

import "time"

// On-disk format. Part of the on-disk format and must never change: replay
// of existing WALs, forensic readers and fixtures depend on every value.
const (
	// frameMagic opens every frame: "NWAL".
	frameMagic uint32 = 0x4E57414C
	// frameHeaderBytes is magic u32 + length u32 + seq u64 + CRC-32 u32.
	frameHeaderBytes = 20
	// recordPayloadMaxBytes caps a frame's payload (one encoded record); also
	// the largest length trusted while scanning, so a corrupt length never
	// triggers a bigger allocation.
	recordPayloadMaxBytes = 16 << 20
	// recordFormatLegacy is the format byte of records without a topic id.
	recordFormatLegacy byte = 1
	// recordFormatIncarnation is the format byte of records with a topic id.
	recordFormatIncarnation byte = 2
	// recordFormatScheduled is the format byte of a scheduled record (a
	// per-message delay): format 2's fields, the topic id possibly empty,
	// then deliver_at_ms u64 (> 0) after the payload.
	recordFormatScheduled byte = 3
	// topicIDBytes is the length of a topic id string in format 2.
	topicIDBytes = 16
	// recordFixedBytes is the fixed part of a format 1 record: format byte,
	// three u32 lengths (topic, key, payload), partition u32, created_at_ms u64.
	recordFixedBytes = 1 + 4 + 4 + 4 + 8 + 4
	// recordTopicIDExtraBytes is what format 2 adds: a str of the topic id.
	recordTopicIDExtraBytes = 4 + topicIDBytes
	// recordDeliverAtExtraBytes is what format 3 adds to format 1: a str of
	// the topic id (counted apart, it may be empty) and deliver_at_ms u64.
	recordDeliverAtExtraBytes = 4 + 8
	// checkpointFileBytes is the exact size of the checkpoint file.
	checkpointFileBytes = 8
	// checkpointFileName names the checkpoint file inside the WAL directory.
	checkpointFileName = "checkpoint"
	// segmentNameDigits is the zero-padded width of a segment's base sequence.
	segmentNameDigits = 20
	// segmentFileSuffix ends every segment file name.
	segmentFileSuffix = ".wal"
	// prepFileName names the spare segment being prepared (spec 2.6).
	prepFileName = "next-segment.prep"
	// prepTrailerMagic opens the trailer that ends a prepared segment.
	prepTrailerMagic = "NWPREP01"
	// prepTrailerBytes is the trailer: the magic then the write limit as a
	// big-endian u64 (the offset the trailer starts at).
	prepTrailerBytes = 16
)

// Behaviour constants (spec section 2 and Appendix A).
const (
	// segmentSizeMaxBytes: a segment rolls when size + frame would exceed it.
	segmentSizeMaxBytes = 64 << 20
	// syncBackstopInterval wakes the sync loop when no poke arrives.
	syncBackstopInterval = 10 * time.Millisecond
	// stagingBufferKeepMaxBytes: a staging buffer above this is dropped after
	// its batch rather than kept for reuse.
	stagingBufferKeepMaxBytes = 4 << 20
	// rotateFloorBytes: a fully dispatched active segment smaller than this is
	// not rolled by compaction.
	rotateFloorBytes = 1 << 20
	// checkpointFlushInterval bounds how long a stored checkpoint waits for
	// its fdatasync.
	checkpointFlushInterval = 250 * time.Millisecond
	// magicScanChunkBytes and magicScanOverlapBytes shape the search for a
	// valid frame behind a bad one during replay.
	magicScanChunkBytes   = 4 << 10
	magicScanOverlapBytes = 3
	// preparedRunMaxBytes bounds one write-and-fsync into a prepared
	// segment: a larger group commit goes in runs of whole frames.
	preparedRunMaxBytes = 16 << 20
	// preparedTornWindowBytes: in a prepared last segment, valid frames
	// starting within this distance after a bad frame are a torn run.
	preparedTornWindowBytes = 16 << 20
)

// Implementation constants (ours, not part of the format).
const (
	// readWindowBytes is the largest read-ahead window of a segment reader;
	// readWindowMinBytes its first, grown 4x on each refill, so a read of a
	// few records copies a few KiB rather than the whole window.
	readWindowBytes    = 256 << 10
	readWindowMinBytes = 16 << 10
	// indexIntervalBytes spaces the entries of a segment's sparse in-memory
	// index of (seq, offset) pairs.
	indexIntervalBytes = 64 << 10
	// readPreallocEntries caps the entries ReadFrom allocates up front.
	readPreallocEntries = 1024
	// prepChunkBytes is the zero buffer used to fill a spare segment and to
	// check or clear the tail of a prepared one.
	prepChunkBytes = 1 << 20
)
