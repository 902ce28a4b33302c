package metastore

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/narad/narad/domain/meta"
)

// newerType is an entry type no build knows yet.
const newerType = meta.AppliesThroughType + 1

func remoteEnv() meta.Envelope {
	return env(&meta.PutRemote{Name: "dr", ID: topicID(9), URL: "https://dr.example.com", Username: "r", Salt: make([]byte, 32),
		Credential: meta.RemoteCredential{SealedPassword: []byte("s"), KeyVersion: topicID(3), Fingerprint: "0123456789ab"},
		Limits:     meta.RemoteLimits{MaxInFlight: 1, RequestTimeoutMs: 5000, IdleConnTimeoutMs: 1000, ConnMaxAgeMs: 10000, CheckIntervalMs: 10000, Compression: "none"}})
}

// markNewer writes, as a newer build would, a record saying the database
// applied newerType.
func markNewer(t *testing.T, s *stateMachine) {
	t.Helper()
	if err := s.db.Set(keyNewestType, []byte{byte(newerType)}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
}

// Ensure that the newest entry type applied is recorded with the applied
// index (refusals count: they were applied), survives a restart, only
// grows, and travels in snapshots (internals §8.1 fsm_meta, §8.4).
func TestNewestTypeAppliedIsRecorded(t *testing.T) {
	dir := t.TempDir()
	s := openSM(t, dir)
	if got := s.newestTypeApplied(); got != 0 {
		t.Fatalf("fresh database newest type %d", got)
	}
	if _, err := s.Update(entries(t, 1, createTopic("a", 1), remoteEnv(), remoteEnv())); err != nil {
		t.Fatal(err)
	}
	if got := s.newestTypeApplied(); got != meta.TypePutRemote {
		t.Fatalf("newest type %s, want PutRemote", got)
	}
	if _, err := s.Update(entries(t, 4, createTopic("b", 2))); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openSM(t, dir)
	defer s.Close()
	if got := s.newestTypeApplied(); got != meta.TypePutRemote || s.applied.Load() != 4 {
		t.Fatalf("reopened with newest type %s at %d, want PutRemote at 4", s.newestTypeApplied(), s.applied.Load())
	}
	b := openSM(t, t.TempDir())
	defer b.Close()
	if err := b.RecoverFromSnapshot(bytes.NewReader(snapshotOf(t, s)), nil); err != nil {
		t.Fatal(err)
	}
	if got := b.newestTypeApplied(); got != meta.TypePutRemote {
		t.Fatalf("restored newest type %s, want PutRemote", got)
	}
}

// Ensure that a database that applied an entry type this build does not
// know is refused at open with a clear error (internals §8.3 last bullet).
func TestOpenRefusesDatabaseFromNewerRelease(t *testing.T) {
	dir := t.TempDir()
	s := openSM(t, dir)
	if _, err := s.Update(entries(t, 1, createTopic("a", 1))); err != nil {
		t.Fatal(err)
	}
	markNewer(t, s)
	s.Close()
	again := newStateMachine(newDBFiles(dir, testLogger()), testLogger(), meta.JournalKeep, nil)
	_, err := again.Open(nil)
	if !errors.Is(err, ErrNewerDatabase) {
		t.Fatalf("Open = %v, want ErrNewerDatabase", err)
	}
	wants := []string{
		fmt.Sprintf("entry type %d", newerType),
		fmt.Sprintf("applies through %d", meta.AppliesThroughType),
		"applied through index 1",
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	if again.db != nil {
		t.Fatal("the refused database was left open")
	}
}

// Ensure that a snapshot that applied an entry type this build does not
// know is refused at install, leaving the live database as it was.
func TestInstallRefusesSnapshotFromNewerRelease(t *testing.T) {
	a := openSM(t, t.TempDir())
	defer a.Close()
	if _, err := a.Update(entries(t, 1, createTopic("from-newer", 1))); err != nil {
		t.Fatal(err)
	}
	markNewer(t, a)
	snap := snapshotOf(t, a)
	b := openSM(t, t.TempDir())
	defer b.Close()
	if _, err := b.Update(entries(t, 1, createTopic("kept", 1), createTopic("kept-too", 2))); err != nil {
		t.Fatal(err)
	}
	if err := b.RecoverFromSnapshot(bytes.NewReader(snap), nil); !errors.Is(err, ErrNewerDatabase) {
		t.Fatalf("Recover = %v, want ErrNewerDatabase", err)
	}
	if d := describe(t, b); !strings.Contains(d, "topic kept ") || strings.Contains(d, "from-newer") || b.applied.Load() != 2 {
		t.Fatalf("live state changed (applied %d):\n%s", b.applied.Load(), d)
	}
}

// Ensure that a node whose database applied a newer entry type does not
// start: OpenMetadata returns ErrNewerDatabase before Raft starts, and the
// node starts again once the database is one this build knows.
func TestNodeRefusesToRestartOnDatabaseFromNewerRelease(t *testing.T) {
	dir, addr := t.TempDir(), freeAddr(t)
	n := startNode(t, "solo", addr, dir, StoreConfig{})
	leaderOf(t, n)
	mustPropose(t, n.store, createTopic("kept", 1))
	if got := n.store.NewestTypeApplied(); got != meta.TypeCreateTopic {
		t.Fatalf("NewestTypeApplied = %s", got)
	}
	n.stop()

	files := newDBFiles(smDir(dir), testLogger())
	setNewest(t, files, []byte{byte(newerType)})
	h, err := NewHost(HostConfig{NodeID: "solo", RaftAddr: addr, DataDir: dir, RTT: testRTT, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.OpenMetadata(StoreConfig{})
	h.Close()
	if !errors.Is(err, ErrNewerDatabase) {
		t.Fatalf("OpenMetadata over a newer database = %v", err)
	}

	setNewest(t, files, []byte{byte(meta.TypeCreateTopic)})
	n = startNode(t, "solo", addr, dir, StoreConfig{})
	mustTopic(t, n, "kept")
}

func smDir(dataDir string) string { return dataDir + "/fsm/shard-1" }

func setNewest(t *testing.T, files *dbFiles, v []byte) {
	t.Helper()
	db, err := files.openCurrent()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Set(keyNewestType, v, pebble.Sync); err != nil {
		t.Fatal(err)
	}
}
