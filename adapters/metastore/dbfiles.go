package metastore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/zap"
)

// Layout of the state machine's directory (part of the on-disk format):
//
//	<dir>/CURRENT       name of the live database directory, e.g. "db-000003"
//	<dir>/db-000003/    the live pebble database
//	<dir>/db-000004.tmp a snapshot being installed (deleted at start)
//
// A snapshot installs into a fresh directory; CURRENT is then replaced by
// write-temp, fsync, rename, fsync-dir, so a crash leaves either the old or
// the new database live, never a half-written one.
const (
	currentFile = "CURRENT"
	dbPrefix    = "db-"
	tmpSuffix   = ".tmp"
)

type dbFiles struct {
	dir  string
	live string // name of the live database directory
	opts func() *pebble.Options
}

func newDBFiles(dir string, log *zap.Logger) *dbFiles {
	plog := pebbleLogger{log.With(zap.String("component", "pebble"))}
	return &dbFiles{dir: dir, opts: func() *pebble.Options { return &pebble.Options{Logger: plog} }}
}

func (f *dbFiles) current() string { return filepath.Join(f.dir, f.live) }

// openCurrent opens the live database (creating db-000001 on first start)
// and deletes leftovers of interrupted installs and replaced databases.
func (f *dbFiles) openCurrent() (*pebble.DB, error) {
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return nil, fmt.Errorf("metastore: state dir: %w", err)
	}
	live, err := os.ReadFile(filepath.Join(f.dir, currentFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		f.live = dbName(1)
		if err := f.setCurrent(f.live); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("metastore: read CURRENT: %w", err)
	default:
		f.live = strings.TrimSpace(string(live))
	}
	if err := f.removeAllBut(f.live); err != nil {
		return nil, err
	}
	db, err := pebble.Open(f.current(), f.opts())
	if err != nil {
		return nil, fmt.Errorf("metastore: open %s: %w", f.current(), err)
	}
	return db, nil
}

func dbName(n uint64) string { return fmt.Sprintf("%s%06d", dbPrefix, n) }

// nextName returns the directory name after the live one.
func (f *dbFiles) nextName() string {
	n, _ := strconv.ParseUint(strings.TrimPrefix(f.live, dbPrefix), 10, 64)
	return dbName(n + 1)
}

// setCurrent makes name the live database, crash-safely.
func (f *dbFiles) setCurrent(name string) error {
	tmp := filepath.Join(f.dir, currentFile+tmpSuffix)
	if err := writeSynced(tmp, []byte(name+"\n")); err != nil {
		return fmt.Errorf("metastore: write CURRENT: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(f.dir, currentFile)); err != nil {
		return fmt.Errorf("metastore: install CURRENT: %w", err)
	}
	if err := syncDir(f.dir); err != nil {
		return fmt.Errorf("metastore: sync state dir: %w", err)
	}
	f.live = name
	return nil
}

// removeAllBut deletes every database directory except keep.
func (f *dbFiles) removeAllBut(keep string) error {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return fmt.Errorf("metastore: list state dir: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), dbPrefix) && e.Name() != keep {
			if err := os.RemoveAll(filepath.Join(f.dir, e.Name())); err != nil {
				return fmt.Errorf("metastore: remove %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	file, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := file.Write(data); err != nil {
		file.Close()
		return err
	}
	if err := file.Sync(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// onDisk returns the fsm_meta record of the live database (zero when the
// directory holds none), refusing one from a newer release
// (ErrNewerDatabase, with the record still returned). It opens and closes
// the database.
func (f *dbFiles) onDisk() (smMeta, error) {
	if _, err := os.Stat(filepath.Join(f.dir, currentFile)); errors.Is(err, os.ErrNotExist) {
		return smMeta{}, nil
	}
	db, err := f.openCurrent()
	if err != nil {
		return smMeta{}, err
	}
	m, err := readSMMeta(kvReader{db})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return m, err
}
