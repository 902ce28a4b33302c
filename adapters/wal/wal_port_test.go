package wal

import (
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/ports"
	"github.com/narad/narad/ports/porttest"
)

func opener(opts Options) porttest.IngressWALOpener {
	return func(t *testing.T) ports.IngressWAL {
		w, err := Open(opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return w
	}
}

// ensure that the WAL on the real filesystem keeps the IngressWAL contract.
func TestPortConformanceOS(t *testing.T) {
	porttest.IngressWAL(t, porttest.IngressWALFeatures{Reopen: true}, func(t *testing.T) porttest.IngressWALOpener {
		return opener(Options{Dir: t.TempDir()})
	})
}

// ensure that the WAL on MemFS, with tiny segments so rolls happen inside the
// suite, keeps the IngressWAL contract.
func TestPortConformanceMemFS(t *testing.T) {
	porttest.IngressWAL(t, porttest.IngressWALFeatures{Reopen: true}, func(t *testing.T) porttest.IngressWALOpener {
		return opener(Options{FS: vfs.NewMem(), Dir: testDir, SegmentSizeMaxBytes: 2048})
	})
}
