package segmentlog

import (
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/ports"
	"github.com/narad/narad/ports/porttest"
)

// harness is how a store under the suite was opened, so Reopen and AgeOut
// can find its files and its clock.
type harness struct {
	opts  Options
	clock *fakeClock
}

var harnesses sync.Map // *Store → harness

func suiteOpener(newFS func(t *testing.T) (vfs.FS, string), codec Codec) func(t *testing.T) ports.PartitionLogs {
	return func(t *testing.T) ports.PartitionLogs {
		fsys, dir := newFS(t)
		clock := newFakeClock()
		opts := testOptions(fsys, clock)
		opts.DataDir, opts.Codec = dir, codec
		return openRegistered(t, harness{opts: opts, clock: clock})
	}
}

func openRegistered(t *testing.T, h harness) *Store {
	s := mustOpen(t, h.opts)
	harnesses.Store(s, h)
	return s
}

func harnessOf(pl ports.PartitionLogs) harness {
	h, _ := harnesses.Load(pl)
	return h.(harness)
}

var suiteFeatures = porttest.PartitionLogsFeatures{
	Reopen: func(t *testing.T, pl ports.PartitionLogs) ports.PartitionLogs {
		if err := pl.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		return openRegistered(t, harnessOf(pl))
	},
	AgeOut: func(t *testing.T, pl ports.PartitionLogs, d time.Duration) {
		harnessOf(pl).clock.Advance(d)
		pl.(*Store).reapOnce()
	},
}

func osFS(t *testing.T) (vfs.FS, string) { return vfs.OS{}, t.TempDir() }

func memFS(*testing.T) (vfs.FS, string) { return vfs.NewMem(), "/data" }

// ensure that the real store keeps the PartitionLogs contract on the OS
// filesystem with both codecs and on the crashable in-memory filesystem.
func TestConformance(t *testing.T) {
	t.Run("os_codec_none", func(t *testing.T) { porttest.PartitionLogs(t, suiteOpener(osFS, CodecNone), suiteFeatures) })
	t.Run("os_codec_zstd", func(t *testing.T) { porttest.PartitionLogs(t, suiteOpener(osFS, CodecZstd), suiteFeatures) })
	t.Run("memfs", func(t *testing.T) { porttest.PartitionLogs(t, suiteOpener(memFS, CodecNone), suiteFeatures) })
}
