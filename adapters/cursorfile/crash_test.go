package cursorfile

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/ports"
)

// ensure that every acknowledged Store survives a machine crash, whatever
// the torn unsynced bytes.
func TestAcknowledgedStoreSurvivesCrash(t *testing.T) {
	t.Parallel()
	mem := partitionFS(t, parentID)
	s := newStore(t, mem)
	rng := rand.New(rand.NewPCG(1, 2))
	for next := int64(0); next < 50; next++ {
		mustStore(t, s, ports.FanoutCursor{Epoch: epochA, NextOffset: next})
		crashed := mem.Crash(vfs.CrashOptions{Rand: rng})
		if c, ok := mustLoad(t, newStore(t, crashed)); !ok || c.NextOffset != next {
			t.Fatalf("after crash at %d: %+v %v", next, c, ok)
		}
	}
}

// ensure that a failed step of a Store reports an error and leaves the
// previous record (or none) readable, live and after a crash: the cursor
// then replays, it never skips (§6.5, G5).
func TestFailedStoreKeepsPreviousRecord(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		existing bool // a fixed record at 5 is there before the failing Store
		cached   bool // the new record may sit unsynced in the page cache
		op       vfs.Op
		substr   string
	}{
		{"first_temp_create", false, false, vfs.OpCreate, ".tmp"},
		{"first_temp_write", false, false, vfs.OpWrite, ".tmp"},
		{"first_temp_sync", false, false, vfs.OpSync, ".tmp"},
		{"first_rename", false, false, vfs.OpRename, ".tmp"},
		{"advance_open", true, false, vfs.OpOpen, "fanout-audit.offset"},
		{"advance_write", true, false, vfs.OpWrite, "fanout-audit.offset"},
		{"advance_sync", true, true, vfs.OpSync, "fanout-audit.offset"},
		{"advance_marker_read", true, false, vfs.OpOpen, "incarnation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mem := partitionFS(t, parentID)
			ops := &opLog{}
			s := newStore(t, vfs.Inject(mem, ops.hook))
			if tc.existing {
				mustStore(t, s, ports.FanoutCursor{Epoch: epochA, NextOffset: 5})
			}
			ops.FailNext(tc.op, tc.substr)
			if err := s.Store(parent, "audit", ports.FanoutCursor{Epoch: epochA, NextOffset: 9}); !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("store: %v", err)
			}
			for view, fsys := range map[string]vfs.FS{"live": mem, "crashed": mem.Crash(vfs.CrashOptions{})} {
				c, ok := mustLoad(t, newStore(t, fsys))
				switch {
				case tc.cached && view == "live" && ok && c.NextOffset == 9: // whole, only not durable
				case tc.existing && (!ok || c.NextOffset != 5):
					t.Errorf("%s: %+v %v, want the record at 5", view, c, ok)
				case !tc.existing && ok:
					t.Errorf("%s: a record appeared: %+v", view, c)
				}
			}
			if names, _ := mem.List("/data/topics/orders/p00002"); len(names) > 1 {
				t.Errorf("leftovers: %v", names)
			}
		})
	}
}

// ensure that a first record whose rename the disk did not make durable is
// simply absent after a crash, never half there.
func TestLyingDirSyncLosesOnlyTheName(t *testing.T) {
	t.Parallel()
	mem := partitionFS(t, parentID)
	ops := &opLog{}
	ops.LieNext(vfs.OpSyncDir, "p00002")
	mustStore(t, newStore(t, vfs.Inject(mem, ops.hook)), ports.FanoutCursor{Epoch: epochA, NextOffset: 3})
	if _, ok, err := newStore(t, mem.Crash(vfs.CrashOptions{})).Load(parent, "audit"); ok || err != nil {
		t.Fatalf("after crash: ok %v err %v", ok, err)
	}
}
