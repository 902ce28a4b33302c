package metastore

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/narad/narad/domain/meta"
)

// The state machine's own record (internals §8.1 fsm_meta, §8.4), written in
// the same synced batch as the entries it describes. Both keys sort before
// every view key. Part of the on-disk and snapshot format.
var (
	// keyAppliedIndex holds the index of the newest applied entry, 8 bytes
	// big-endian.
	keyAppliedIndex = []byte("\x00sm/applied-index")
	// keyNewestType holds the newest entry type ever applied, 1 byte (the
	// envelope's type byte); absent means no entry newer than the legacy
	// set was recorded (databases written before the key existed).
	keyNewestType = []byte("\x00sm/newest-type")
)

// smMeta is what the record says about a database.
type smMeta struct {
	applied uint64
	newest  meta.EntryType
}

// readSMMeta reads the record and refuses a database that applied an entry
// type this build does not know (§8.3): serving it would show views this
// build cannot maintain, and replaying onto it would diverge.
func readSMMeta(r meta.KVReader) (smMeta, error) {
	var m smMeta
	b, ok, err := r.Get(keyAppliedIndex)
	if err != nil {
		return m, err
	}
	if ok && len(b) != 8 {
		return m, fmt.Errorf("metastore: applied index of %d bytes: %w", len(b), meta.ErrCorruptView)
	}
	if ok {
		m.applied = binary.BigEndian.Uint64(b)
	}
	b, ok, err = r.Get(keyNewestType)
	if err != nil || !ok {
		return m, err
	}
	if m.newest, err = decodeNewestType(b); err != nil {
		return m, err
	}
	if err := checkKnownType(m.newest); err != nil {
		return m, fmt.Errorf("metastore: database applied through index %d: %w", m.applied, err)
	}
	return m, nil
}

func decodeNewestType(b []byte) (meta.EntryType, error) {
	if len(b) != 1 {
		return 0, fmt.Errorf("metastore: newest entry type of %d bytes: %w", len(b), meta.ErrCorruptView)
	}
	return meta.EntryType(b[0]), nil
}

// checkKnownType refuses a record naming a type newer than this build.
func checkKnownType(newest meta.EntryType) error {
	if newest <= meta.AppliesThroughType {
		return nil
	}
	return fmt.Errorf("%w: it applied entry type %d (%s), this build applies through %d (%s): upgrade the binary",
		ErrNewerDatabase, uint8(newest), newest, uint8(meta.AppliesThroughType), meta.AppliesThroughType)
}

func readAppliedIndex(db *pebble.DB) (uint64, error) {
	m, err := readSMMeta(kvReader{db})
	return m.applied, err
}

// writeSMMeta records applied (and newest, when it moved) in batch.
func writeSMMeta(batch *pebble.Batch, m smMeta, newestMoved bool) error {
	var idx [8]byte
	binary.BigEndian.PutUint64(idx[:], m.applied)
	if err := batch.Set(keyAppliedIndex, idx[:], nil); err != nil {
		return err
	}
	if !newestMoved {
		return nil
	}
	return batch.Set(keyNewestType, []byte{byte(m.newest)}, nil)
}
