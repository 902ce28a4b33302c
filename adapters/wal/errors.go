package wal

import (
	"errors"
	"fmt"
)

// Sentinel errors of package wal. Errors about records and the disk latch use
// the domain sentinels (domain.ErrInvalidRecord, domain.ErrRecordTooLarge,
// domain.ErrWALFailed, domain.ErrClosed).
var (
	// ErrCorrupt: bytes on disk that no correct writer and no crash can leave
	// (a bad frame followed by a valid one, damage in a sealed segment, a
	// sequence gap, a checkpoint file of the wrong size). Open refuses them.
	ErrCorrupt = errors.New("wal: corrupt")
	// ErrCheckpointAhead: the checkpoint names a sequence the log never
	// reached; opening would blackhole every record appended below it.
	ErrCheckpointAhead = errors.New("wal: checkpoint ahead of the log")
	// ErrCheckpointBeyondDurable: StoreCheckpoint was given a sequence past
	// DurableNext.
	ErrCheckpointBeyondDurable = errors.New("wal: checkpoint beyond the durable end")
	// ErrCheckpointBackwards: StoreCheckpoint was given a sequence below the
	// stored checkpoint.
	ErrCheckpointBackwards = errors.New("wal: checkpoint moves backwards")
	// ErrRecordFormat: a frame's payload (whose CRC matched) is not a record
	// this binary can decode: an unknown format byte, truncation, trailing
	// bytes, or a record no encoder writes.
	ErrRecordFormat = errors.New("wal: undecodable record payload")
)

// CorruptionError says where Open or a read found damage. It unwraps to
// ErrCorrupt.
type CorruptionError struct {
	// File is the path of the damaged file.
	File string
	// Offset is the byte offset of the first bad byte range (the start of the
	// frame that failed).
	Offset int64
	// Reason says what was wrong.
	Reason string
}

// Error names the file, the byte offset and the reason.
func (e *CorruptionError) Error() string {
	return fmt.Sprintf("wal: corrupt %s at byte offset %d: %s", e.File, e.Offset, e.Reason)
}

// Unwrap lets errors.Is(err, ErrCorrupt) match.
func (e *CorruptionError) Unwrap() error { return ErrCorrupt }
