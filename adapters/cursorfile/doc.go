// Package cursorfile persists fan-out cursors (internals.md §6.5): one file
// per (parent partition, child) in the parent partition's directory, beside
// adapters/segmentlog's segments. It implements ports.FanoutCursors over
// vfs.FS and never uses package os. It never creates a directory and never
// writes into a directory whose incarnation marker names another topic
// incarnation than the parent ref's.
//
// # Format
//
//	<data>/topics/<parent>/p<NNNNN>/fanout-<child>.offset
//
// The record is JSON padded to a fixed 256 bytes:
//
//	offset  size  field
//	     0     8  {"crc":"
//	     8     8  CRC-32C (Castagnoli), 8 lowercase hex digits
//	    16     1  "
//	    17     …  ,"epoch":"<epoch>","next_offset":<N>}
//	     …     …  spaces up to byte 254
//	   255     1  \n
//
// The CRC covers every byte after the crc field, [17, 256): the rest of the
// JSON, the padding and the newline. A record whose JSON does not fit in
// 255 bytes (an epoch too long to pad) is written unpadded, JSON and one
// newline, its CRC over the same [17, end) range. Readers older than the
// CRC read the record as plain JSON (they ignore crc and padding). The
// format before the CRC, {"epoch":"…","next_offset":N}, is still read, and
// the next Store replaces it with the fixed record.
//
// # Protocol
//
//   - Store, file absent (the first anchor) or not a fixed 256-byte record
//     (an old format, an unpadded record): write <file>.tmp, fdatasync,
//     check the directory's incarnation marker, rename over the file, sync
//     the directory.
//   - Store, fixed record present: open it, check the marker, one 256-byte
//     write at offset 0, fdatasync.
//   - Load: read the file; a record that fails its CRC or does not parse is
//     read again up to three times, a millisecond apart (the reader may
//     have caught the writer mid-write), before it is declared corrupt
//     (domain.ErrCursorCorrupt).
//   - Remove: check the marker, remove the file, sync the directory.
//
// # Crash Safety
//
//   - The first record of a file appears whole or not at all (rename of a
//     synced temp file); an in-place advance is one 256-byte write, which a
//     crash can tear only inside one sector. A torn or damaged record fails
//     its CRC: the cursor replays from its link's attach point (duplicates,
//     never loss).
//   - A cursor is advanced only after the records below it were committed to
//     the child, so no recovered record points past an uncommitted batch.
//   - A held descriptor follows its file through a quarantine rename, so a
//     late write lands in the retired copy, never in a successor's
//     directory.
//
// # Assumptions
//
//   - adapters/segmentlog stamps the topic's incarnation marker before it
//     creates partition directories (PartitionDir and MarkerPath name them).
//   - A 256-byte write at offset 0 lands within one 512-byte sector.
//   - One cursor drives one file; readers may race it.
package cursorfile
