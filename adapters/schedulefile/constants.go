package schedulefile

import (
	"encoding/binary"
	"math"
)

// File names. Part of the on-disk format: a bucket file whose name changes
// is never found again (and its records never delivered).
const (
	fileNamePrefix = "schedule-" // then the window's start, unix ms, in decimal
	fileNameSuffix = ".bucket"
)

// Frame layout. Part of the on-disk format.
const (
	frameLenBytes    = 4                             // big-endian body length
	frameCRCBytes    = 4                             // big-endian CRC-32C of the body
	frameHeaderBytes = frameLenBytes + frameCRCBytes // the body starts here

	kindRecord byte = 1 // a scheduled record
	kindFired  byte = 2 // ordinals of records released into the partition log
	kindCommit byte = 3 // closes the batch of record frames before it

	deliverAtBytes    = 8                     // a record's big-endian deliver_at_ms
	uvarint32MaxBytes = binary.MaxVarintLen32 // the longest uvarint of a value <= MaxUint32
	recordsMax        = math.MaxUint32        // record frames one file may hold: ordinals fit a uint32
)

// Record caps. domain.Record carries none of its own, so these are this
// format's: the produce path's payload cap (application/produce's
// MessageMaxBytes, 1 MiB) and as much again of key (a batch produce's key
// has no cap of its own below the 16 MiB body; a record past these caps
// would not fit the partition log's frame either). Append refuses a record
// past either with domain.ErrRecordTooLarge, and Open refuses a frame past
// them.
const (
	recordPayloadMaxBytes = 1 << 20
	recordKeyMaxBytes     = 1 << 20
	// frameBodySlackBytes covers a record body's fixed part: kind (1),
	// deliver_at_ms (8) and two length uvarints (3 each at these caps).
	frameBodySlackBytes = 64
	frameBodyMaxBytes   = recordPayloadMaxBytes + recordKeyMaxBytes + frameBodySlackBytes
	frameMaxBytes       = frameHeaderBytes + frameBodyMaxBytes
	// firedFrameOrdinalsMax is the most ordinals one fired frame may name,
	// so that its body (kind, count, ordinals) stays under the cap.
	firedFrameOrdinalsMax = (frameBodyMaxBytes - 1 - uvarint32MaxBytes) / uvarint32MaxBytes
)

// Buffers.
const (
	// readWindowBytes is the window Open reads a file through; it holds
	// several of the largest frames, so each is read whole.
	readWindowBytes = 4 << 20
	// keptBufferBytesMax is the largest encode buffer a Bucket keeps between
	// writes; a larger one (a big batch) is dropped after use.
	keptBufferBytesMax = 256 << 10
)
