package orphans_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/orphans"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const (
	liveID = "00000000000000a1"
	oldID  = "00000000000000b2"
)

func setup(t *testing.T, dirs ...ports.TopicDir) (*fake.MetaStore, *fake.TopicDirs, *orphans.Sweeper) {
	t.Helper()
	store := fake.NewMetaStore()
	ev := &meta.CreateTopic{Name: "live", ID: liveID, Partitions: 3, VisibilityTimeoutMs: 30_000, MaxInFlight: 1, MaxAckedAhead: 1}
	if got, err := store.Propose(context.Background(), meta.Envelope{Event: ev}); err != nil || !got.Result.OK() {
		t.Fatalf("create: %+v %v", got, err)
	}
	fd := fake.NewTopicDirs(dirs...)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return store, fd, orphans.New(store, fd, leaderconfirm.New(store), log)
}

// The directories a restarted node can find (internals.md §4.1, §9.8).
var (
	liveDir       = ports.TopicDir{Dir: "live", Topic: "live", ID: liveID, Marker: liveID}
	markerless    = ports.TopicDir{Dir: "live", Topic: "live"}
	replacedDir   = ports.TopicDir{Dir: "live", Topic: "live", ID: oldID, Marker: oldID}
	quarantine    = ports.TopicDir{Dir: "live.stale-" + oldID, Topic: "live", ID: oldID, Marker: oldID, Quarantine: true}
	deletedDir    = ports.TopicDir{Dir: "gone", Topic: "gone", ID: oldID, Marker: oldID}
	deletedLegacy = ports.TopicDir{Dir: "legacy", Topic: "legacy"}
)

// Ensure that the sweep reclaims deleted incarnations' directories and
// quarantines and keeps every live directory.
func TestSweepReclaimsOnlyDeletedIncarnations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dir  ports.TopicDir
		keep bool
	}{
		{liveDir, true}, {markerless, true}, {replacedDir, false}, {quarantine, false}, {deletedDir, false}, {deletedLegacy, false},
	} {
		t.Run(tc.dir.Dir+"/"+string(tc.dir.Marker), func(t *testing.T) {
			_, fd, sw := setup(t, tc.dir)
			out, err := sw.Sweep(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			kept := len(fd.Names()) == 1
			if kept != tc.keep || out.Reclaimed != map[bool]int{true: 0, false: 1}[tc.keep] {
				t.Fatalf("kept=%v reclaimed=%d, want keep=%v", kept, out.Reclaimed, tc.keep)
			}
		})
	}
}

// Ensure that a restarted node whose leader cannot confirm keeps every
// directory and counts them as unconfirmed (the stale-replica family: no
// destructive act on a replica's own, possibly stale, view).
func TestSweepKeepsWhenTheLeaderCannotConfirm(t *testing.T) {
	t.Parallel()
	store, fd, sw := setup(t, liveDir, replacedDir, quarantine, deletedDir)
	store.FailBarrier(errors.New("no quorum"))
	out, err := sw.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.Reclaimed != 0 || out.Unconfirmed != 3 || len(fd.Names()) != 4 {
		t.Fatalf("outcome %+v, left %v", out, fd.Names())
	}
}

// Ensure that a topic recreated at the marker's incarnation after the
// replica was read is not reclaimed: the leader's confirmed view wins.
func TestSweepAsksTheConfirmedView(t *testing.T) {
	t.Parallel()
	store, fd, sw := setup(t, deletedDir)
	lagging := &laggingStore{MetaStore: store}
	sw = orphans.New(lagging, fd, leaderconfirm.New(store), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ev := &meta.CreateTopic{Name: "gone", ID: oldID, Partitions: 3, VisibilityTimeoutMs: 30_000, MaxInFlight: 1, MaxAckedAhead: 1}
	if got, err := store.Propose(context.Background(), meta.Envelope{Event: ev}); err != nil || !got.Result.OK() {
		t.Fatalf("create: %+v %v", got, err)
	}
	out, err := sw.Sweep(context.Background())
	if err != nil || out.Reclaimed != 0 || fmt.Sprint(fd.Names()) != "[gone]" {
		t.Fatalf("outcome %+v %v, left %v", out, err, fd.Names())
	}
}

// laggingStore is a replica that has not applied anything: every topic
// reads absent.
type laggingStore struct{ *fake.MetaStore }

func (laggingStore) Topic(string) (meta.Topic, bool, error) { return meta.Topic{}, false, nil }

// Ensure that Run stops on its own after a pass that confirmed every
// candidate (§9.8: the sweep is a startup pass, not a resident loop).
func TestRunStopsOnceEveryCandidateIsConfirmed(t *testing.T) {
	t.Parallel()
	_, fd, sw := setup(t, liveDir, deletedDir)
	done := make(chan struct{})
	go func() { sw.Run(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run kept going after a fully confirmed pass")
	}
	if fmt.Sprint(fd.Names()) != "[live]" {
		t.Fatalf("left %v", fd.Names())
	}
}
