package metastore

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/zap"

	"github.com/narad/narad/domain/meta"
)

// pebbleReader is what a pebble DB, snapshot and indexed batch share.
type pebbleReader interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

// kvReader adapts a pebble reader to meta.KVReader.
type kvReader struct{ r pebbleReader }

var _ meta.KVReader = kvReader{}

func (k kvReader) Get(key []byte) ([]byte, bool, error) {
	v, closer, err := k.r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("metastore: get %q: %w", key, err)
	}
	out := bytes.Clone(v)
	return out, true, closer.Close()
}

func (k kvReader) Scan(lower, upper []byte, fn func(key, value []byte) (bool, error)) error {
	it, err := k.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("metastore: scan %q: %w", lower, err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("metastore: scan %q: %w", it.Key(), err)
		}
		more, err := fn(it.Key(), v)
		if err != nil || !more {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// batchWriter adapts a pebble batch to meta.KVWriter.
type batchWriter struct{ b *pebble.Batch }

func (w batchWriter) Set(key, value []byte) error { return w.b.Set(key, value, nil) }
func (w batchWriter) Delete(key []byte) error     { return w.b.Delete(key, nil) }

// pebbleLogger routes pebble's log lines to zap.
type pebbleLogger struct{ z *zap.Logger }

func (l pebbleLogger) Infof(format string, args ...any)  { l.z.Debug(fmt.Sprintf(format, args...)) }
func (l pebbleLogger) Errorf(format string, args ...any) { l.z.Error(fmt.Sprintf(format, args...)) }

// Fatalf logs and panics: pebble calls it on unrecoverable corruption.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.z.Error(msg, zap.Bool("halt", true))
	panic(msg)
}
