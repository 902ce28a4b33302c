package segmentlog

import "time"

// Frame and envelope layout. Part of the on-disk format: never change these,
// or every segment already written becomes unreadable.
const (
	frameMagic0 byte = 0xCA // first magic byte
	frameMagic1 byte = 0xFE // second magic byte

	frameHeaderBytes = 27 // magic 2 + flags 1 + count 4 + base 8 + sizes 4+4 + crc 4

	frameFlagsOff      = 2  // flags byte
	frameCountOff      = 3  // int32 record count
	frameBaseOff       = 7  // int64 base offset
	frameRawSizeOff    = 15 // uint32 uncompressed size
	frameStoredSizeOff = 19 // uint32 stored size
	frameCRCOff        = 23 // uint32 CRC-32C over [2,23) + stored payload

	frameCodecMask    byte = 0x07 // flags bits 0-2: codec
	frameReservedMask byte = 0xF8 // flags bits 3-7: reserved, written as zero

	frameSizeMaxBytes = 256 << 20 // cap on both sizes, checked on read and write

	recordLenBytes = 4 // u32 length before each record inside a frame

	envelopeVersion       byte = 0x02                      // keyed envelope with committed_at_ms
	envelopeVersionLegacy byte = 0x01                      // pre-key envelope: decodes as corrupt
	envelopeTimeBytes          = 8                         // committed_at_ms int64
	envelopeMinBytes           = 1 + 1 + envelopeTimeBytes // version, zero key length, time: empty key and payload

	hwmFileBytes = 8 // the hwm file holds one big-endian int64, or nothing
)

// Directory layout. Part of the on-disk format.
const (
	topicsDirName      = "topics"
	markerFileName     = "incarnation"
	hwmFileName        = "hwm"
	segmentExt         = ".log"
	segmentNameDigits  = 20 // <20-digit base offset>.log
	partitionDirDigits = 5  // p<5-digit partition>
	staleDirInfix      = ".stale-"
)

// Write path (spec 4.5). Internal tuning, not configurable.
const (
	frameInnerSplitBytes = 128 << 20              // a drain is split so each frame's inner bytes stay below this
	segmentSizeMaxBytes  = 64 << 20               // a frame that pushes the active segment past this marks it full
	flushBufferBytes     = 1 << 20                // drain when the buffer holds this much
	flushBufferRecords   = 1000                   // or this many records
	flushTickInterval    = 100 * time.Millisecond // flusher timer period while a pass is owed
	flushAgeMin          = time.Second            // or when the oldest buffered record is this old
	syncUnsyncedBytes    = 8 << 20                // fsync when this much is written but unsynced
	syncInterval         = time.Second            // or when the last fsync is this old
)

// Indexes and caches (spec 4.10).
const (
	indexAnchorStrideBytes    = 32 << 10 // one anchor per ~32 KiB of segment
	indexAnchorsMax           = 2048     // stride doubles to stay below this
	hotIndexesMax             = 2        // sealed segments holding a descriptor and an index
	frameCacheFramesMax       = 64       // decoded frames kept per log
	frameCacheBytesMax        = 8 << 20  // and their decoded bytes
	writeThroughFrameBytesMax = 1 << 20  // frames cached as written when the tail is being read
	resyncChunkBytes          = 64 << 10 // scan window when looking for the next frame
	readBackPooledMaxBytes    = 8 << 20  // larger read-back buffers are not kept in the pool
	readPreallocRecords       = 256      // records a read reserves room for up front
)

// Retention and eviction (spec 4.8, 4.12).
const (
	reapIntervalDefault      = time.Minute
	evictScanIntervalDefault = time.Minute
	idleEvictionDefault      = 30 * time.Minute
	idleEvictionFloor        = time.Minute
)

// Codec pools (spec 4.4): GOMAXPROCS clamped to this range.
const (
	codecPoolMin = 4
	codecPoolMax = 32
)

// commitReresolveMax bounds how often a commit re-resolves a log that was
// closed under it (a retired incarnation) before giving up.
const commitReresolveMax = 3
