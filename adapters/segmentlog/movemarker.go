package segmentlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// moveMarkerFileName is the move.marker a move's install writes beside the
// partition's segments (internals.md §11.4). It never moves with the
// partition: each install writes its own.
const moveMarkerFileName = "move.marker"

// moveMarkerBytesMax bounds what a marker read trusts: a marker names the
// topic's links, each a name and an epoch.
const moveMarkerBytesMax = 1 << 20

// errMoveMarkerCorrupt: a move.marker that does not decode.
var errMoveMarkerCorrupt = errors.New("segmentlog: move marker corrupt")

// writeMoveMarker writes m into dir (crash-safe; the install syncs dir).
func (s *Store) writeMoveMarker(dir string, m ports.MoveMarker) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode move marker: %w", err)
	}
	return vfs.WriteFileAtomic(s.opts.FS, filepath.Join(dir, moveMarkerFileName), b)
}

// readMoveMarker reads dir's move.marker; nil when there is none. A marker
// that cannot be decoded is an error, never an absent marker: the sweep of
// a former owner must not read "no marker" into a damaged one.
func (s *Store) readMoveMarker(dir string) (*ports.MoveMarker, error) {
	b, err := vfs.ReadFile(s.opts.FS, filepath.Join(dir, moveMarkerFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("segmentlog: read move marker in %s: %w", dir, err)
	}
	m, err := decodeMoveMarker(b)
	if err != nil {
		return nil, fmt.Errorf("segmentlog: move marker in %s: %w", dir, err)
	}
	return &m, nil
}

// decodeMoveMarker parses a move.marker's bytes.
func decodeMoveMarker(b []byte) (ports.MoveMarker, error) {
	var m ports.MoveMarker
	if len(b) > moveMarkerBytesMax {
		return m, fmt.Errorf("%d bytes: %w", len(b), errMoveMarkerCorrupt)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %w", errMoveMarkerCorrupt, err)
	}
	if m.PromotedHighWatermark < 0 {
		return m, fmt.Errorf("promoted boundary %d: %w", m.PromotedHighWatermark, errMoveMarkerCorrupt)
	}
	return m, nil
}

// MoveMarker returns ref's move.marker, ok false when no move installed
// the partition here.
func (s *Store) MoveMarker(ref domain.PartitionRef) (ports.MoveMarker, bool, error) {
	if err := validateRef(ref); err != nil {
		return ports.MoveMarker{}, false, err
	}
	m, err := s.readMoveMarker(s.slotFor(ref).dir)
	if err != nil || m == nil {
		return ports.MoveMarker{}, false, err
	}
	return *m, true, nil
}
