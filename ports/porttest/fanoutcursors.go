package porttest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// FanoutCursorsFixture is the storage a FanoutCursors suite runs on.
type FanoutCursorsFixture struct {
	Cursors ports.FanoutCursors
	// MakeDir makes parent's partition directory exist and belong to its
	// incarnation, as the partition log would.
	MakeDir func(t *testing.T, parent domain.PartitionRef)
	// RemoveDir deletes parent's partition directory and everything in it.
	RemoveDir func(t *testing.T, parent domain.PartitionRef)
}

// FanoutCursors runs the ports.FanoutCursors conformance suite; open
// returns a fixture on fresh storage.
func FanoutCursors(t *testing.T, open func(t *testing.T) FanoutCursorsFixture) {
	cases := []struct {
		name string
		run  func(t *testing.T, f FanoutCursorsFixture)
	}{
		{"absent_file_loads_nothing", fcAbsent},
		{"store_then_load", fcRoundTrip},
		{"files_are_independent", fcIndependent},
		{"children_lists_cursor_files", fcChildren},
		{"remove_deletes_and_is_idempotent", fcRemove},
		{"gone_directory_refuses_stores", fcGoneDir},
		{"invalid_input_is_refused", fcInvalid},
		{"concurrent_files", fcConcurrent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := open(t)
			f.MakeDir(t, fcParent)
			c.run(t, f)
		})
	}
}

var fcParent = domain.PartitionRef{Topic: "orders", TopicID: "0123456789abcdef", Partition: 3}

const (
	fcEpochA = "00000000000000aa"
	fcEpochB = "00000000000000bb"
)

func fcMustStore(t *testing.T, f FanoutCursorsFixture, ref domain.PartitionRef, child string, c ports.FanoutCursor) {
	t.Helper()
	if err := f.Cursors.Store(ref, child, c); err != nil {
		t.Fatalf("store %s %s %+v: %v", ref, child, c, err)
	}
}

func fcLoad(t *testing.T, f FanoutCursorsFixture, ref domain.PartitionRef, child string) (ports.FanoutCursor, bool) {
	t.Helper()
	c, ok, err := f.Cursors.Load(ref, child)
	if err != nil {
		t.Fatalf("load %s %s: %v", ref, child, err)
	}
	return c, ok
}

func fcAbsent(t *testing.T, f FanoutCursorsFixture) {
	if c, ok := fcLoad(t, f, fcParent, "audit"); ok {
		t.Fatalf("nothing stored, loaded %+v", c)
	}
}

func fcRoundTrip(t *testing.T, f FanoutCursorsFixture) {
	for _, c := range []ports.FanoutCursor{
		{Epoch: fcEpochA, NextOffset: 0},
		{Epoch: fcEpochA, NextOffset: 17},
		{Epoch: fcEpochB, NextOffset: 5}, // another epoch overwrites
		{Epoch: fcEpochB, NextOffset: 1<<63 - 1},
	} {
		fcMustStore(t, f, fcParent, "audit", c)
		if got, ok := fcLoad(t, f, fcParent, "audit"); !ok || got != c {
			t.Fatalf("stored %+v, loaded %+v %v", c, got, ok)
		}
	}
}

func fcIndependent(t *testing.T, f FanoutCursorsFixture) {
	other := fcParent
	other.Partition = 4
	f.MakeDir(t, other)
	fcMustStore(t, f, fcParent, "a", ports.FanoutCursor{Epoch: fcEpochA, NextOffset: 1})
	fcMustStore(t, f, fcParent, "b", ports.FanoutCursor{Epoch: fcEpochA, NextOffset: 2})
	fcMustStore(t, f, other, "a", ports.FanoutCursor{Epoch: fcEpochB, NextOffset: 3})
	for _, w := range []struct {
		ref   domain.PartitionRef
		child string
		next  int64
	}{{fcParent, "a", 1}, {fcParent, "b", 2}, {other, "a", 3}} {
		if c, ok := fcLoad(t, f, w.ref, w.child); !ok || c.NextOffset != w.next {
			t.Errorf("%s %s: %+v %v, want %d", w.ref, w.child, c, ok, w.next)
		}
	}
}

func fcChildren(t *testing.T, f FanoutCursorsFixture) {
	for _, child := range []string{"zeta", "audit", "a.b-c_d"} {
		fcMustStore(t, f, fcParent, child, ports.FanoutCursor{Epoch: fcEpochA, NextOffset: 1})
	}
	got, err := f.Cursors.Children(fcParent)
	if err != nil || !slices.Equal(got, []string{"a.b-c_d", "audit", "zeta"}) {
		t.Fatalf("children %v %v", got, err)
	}
}

func fcRemove(t *testing.T, f FanoutCursorsFixture) {
	fcMustStore(t, f, fcParent, "audit", ports.FanoutCursor{Epoch: fcEpochA, NextOffset: 1})
	for range 2 {
		if err := f.Cursors.Remove(fcParent, "audit"); err != nil {
			t.Fatalf("remove: %v", err)
		}
	}
	if c, ok := fcLoad(t, f, fcParent, "audit"); ok {
		t.Fatalf("removed, loaded %+v", c)
	}
	if got, err := f.Cursors.Children(fcParent); err != nil || len(got) != 0 {
		t.Fatalf("children after remove: %v %v", got, err)
	}
}

func fcGoneDir(t *testing.T, f FanoutCursorsFixture) {
	fcMustStore(t, f, fcParent, "audit", ports.FanoutCursor{Epoch: fcEpochA, NextOffset: 1})
	f.RemoveDir(t, fcParent)
	if err := f.Cursors.Store(fcParent, "audit", ports.FanoutCursor{Epoch: fcEpochA, NextOffset: 2}); !errors.Is(err, domain.ErrPartitionDirGone) {
		t.Fatalf("store into a gone directory: %v", err)
	}
	if c, ok := fcLoad(t, f, fcParent, "audit"); ok {
		t.Fatalf("gone directory loaded %+v", c)
	}
	if got, err := f.Cursors.Children(fcParent); err != nil || len(got) != 0 {
		t.Fatalf("children of a gone directory: %v %v", got, err)
	}
}

func fcInvalid(t *testing.T, f FanoutCursorsFixture) {
	bad := []struct {
		name  string
		child string
		c     ports.FanoutCursor
	}{
		{"empty_epoch", "audit", ports.FanoutCursor{NextOffset: 1}},
		{"negative_offset", "audit", ports.FanoutCursor{Epoch: fcEpochA, NextOffset: -1}},
		{"bad_child_name", "a/b", ports.FanoutCursor{Epoch: fcEpochA}},
		{"empty_child_name", "", ports.FanoutCursor{Epoch: fcEpochA}},
	}
	for _, b := range bad {
		if err := f.Cursors.Store(fcParent, b.child, b.c); !errors.Is(err, domain.ErrInvalidRecord) {
			t.Errorf("%s: %v", b.name, err)
		}
	}
}

func fcConcurrent(t *testing.T, f FanoutCursorsFixture) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			child := fmt.Sprintf("c%d", i)
			for n := int64(0); n < 20; n++ {
				if err := f.Cursors.Store(fcParent, child, ports.FanoutCursor{Epoch: fcEpochA, NextOffset: n}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range 8 {
		if c, ok := fcLoad(t, f, fcParent, fmt.Sprintf("c%d", i)); !ok || c.NextOffset != 19 {
			t.Errorf("c%d: %+v %v", i, c, ok)
		}
	}
}
