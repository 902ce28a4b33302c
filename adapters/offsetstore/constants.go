package offsetstore

// File names and layout inside a partition directory. Part of the on-disk
// format: never change these, or every persisted frontier is lost (and its
// messages redelivered).
const (
	aheadFileName  = "consumer.ahead"  // two checksummed slots: anchor and window
	offsetFileName = "consumer.offset" // 8 bytes: the frontier, big-endian int64
)

// Slot layout of consumer.ahead. Part of the on-disk format.
const (
	slotBytes      = 4096          // one slot; the file holds two
	aheadFileBytes = 2 * slotBytes // a primed file's size

	slotVersion byte = 1

	slotMagicOff    = 0  // 4 bytes "NCOA"
	slotVersionOff  = 4  // 1 byte
	slotReservedOff = 5  // 3 bytes, zero
	slotSeqOff      = 8  // uint64, > 0: the newer record has the larger seq
	slotCommitOff   = 16 // int64, >= -1: the frontier
	slotCountOff    = 24 // uint32: acked-ahead offsets in the body
	slotBodyLenOff  = 28 // uint32: bytes of the body
	slotHeaderBytes = 32 // body starts here
	slotCRCOff      = slotBytes - 4
	slotBodyMax     = slotCRCOff - slotHeaderBytes // 4060 bytes of uvarint deltas

	offsetFileBytes = 8 // consumer.offset: one big-endian int64
)

// slotMagic opens every valid slot.
var slotMagic = [4]byte{'N', 'C', 'O', 'A'}

// DefaultMaxHeldDescriptors bounds the consumer.ahead descriptors a Store
// keeps open (internals.md §5.11: min(4096, RLIMIT_NOFILE soft / 4); the
// caller lowers it from the process limit).
const DefaultMaxHeldDescriptors = 4096
