package receivelog

import "github.com/narad/narad/domain/deadletter"

// File names inside a partition directory. Part of the on-disk format:
// never change these, or every persisted receive count is lost (and its
// messages delivered past their dead-letter limit).
const (
	receivesFileName = "consumer.receives"     // the frames, in append order
	tmpFileName      = "consumer.receives.tmp" // a compaction being written
)

// Frame layout. Part of the on-disk format.
const (
	frameLenBytes     = 4                              // big-endian body length
	frameCRCBytes     = 4                              // big-endian CRC-32C of the body
	frameHeaderBytes  = frameLenBytes + frameCRCBytes  // the body starts here
	frameBodyMaxBytes = deadletter.ReasonBytesMax + 64 // kind and three uvarints take <= 17 bytes, the reason the rest
)

// DefaultMaxHeldDescriptors bounds the consumer.receives descriptors a Store
// keeps open between Appends; the caller lowers it from the process limit.
const DefaultMaxHeldDescriptors = 1024

// keptBufferBytesMax is the largest encode buffer a partition keeps between
// Appends; a larger one (a big Compact) is dropped after use.
const keptBufferBytesMax = 64 << 10
