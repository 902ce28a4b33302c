package cursorfile

import "time"

// Record layout. Part of the on-disk format: never change these, or every
// cursor file already written is read as corrupt and replays from its
// attach point.
const (
	recordBytes  = 256              // a padded record, final newline included
	crcPrefix    = `{"crc":"`       // every CRC record starts so
	crcHexDigits = 8                // the CRC-32C as lowercase hex
	crcFieldEnd  = 17               // the CRC covers [crcFieldEnd, end)
	filePrefix   = "fanout-"        // fanout-<child>.offset
	fileSuffix   = ".offset"        // the cursor file's extension
	tempSuffix   = ".tmp"           // the first-write and replace temp file
	padByte      = ' '              // padding up to the newline
	fileMaxBytes = 64 << 10         // a larger file is corrupt: never read whole
	epochMaxLen  = 1024             // longest epoch Store accepts
	rereadCount  = 3                // extra reads of a record that fails its CRC
	rereadPause  = time.Millisecond // between those reads
)
