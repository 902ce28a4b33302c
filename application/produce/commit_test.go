package produce_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

func commitReq(topic string, id domain.TopicID, p int32, payloads ...string) ports.CommitRequest {
	req := ports.CommitRequest{Topic: topic, TopicID: id, Partition: p}
	for _, pl := range payloads {
		req.Records = append(req.Records, domain.Record{Payload: []byte(pl)})
	}
	return req
}

// Ensure that the owner commits a batch of the live incarnation at dense
// offsets and counts it as produced (conformance 4 on the owner).
func TestCommitterCommitsLiveIncarnation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	for want := int64(0); want < 4; want += 2 {
		first, err := e.committer.CommitBatch(context.Background(), commitReq("t", id, 1, "a", "b"))
		if err != nil || first != want {
			t.Fatalf("commit at %d, %v; want %d", first, err, want)
		}
	}
	if n := e.metrics.Count("produced t/1"); n != 4 {
		t.Fatalf("produced counted %d, want 4", n)
	}
	if recs := e.records(t, "t", id, 1); len(recs) != 4 || recs[0].CommittedAtMs != e.clock.Now().UnixMilli() {
		t.Fatalf("log holds %+v", recs)
	}
}

// Ensure that a batch of a deleted incarnation never lands in the recreated
// topic's log, while the new incarnation's batch lands at offset 0 (story
// F30, conformance 65).
func TestCommitterRefusesAnotherIncarnation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	old := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	e.deleteTopic(t, "t", old)
	if _, err := e.committer.CommitBatch(context.Background(), commitReq("t", old, 0, "old")); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("commit to a deleted topic: %v", err)
	}
	fresh := e.createTopic(t, "t", 2, 3)
	e.assign(t, "t", self)
	if _, err := e.committer.CommitBatch(context.Background(), commitReq("t", old, 0, "old")); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("commit of the old incarnation into the new: %v", err)
	}
	if first, err := e.committer.CommitBatch(context.Background(), commitReq("t", fresh, 0, "new")); err != nil || first != 0 {
		t.Fatalf("new incarnation commit at %d, %v", first, err)
	}
	if first, err := e.committer.CommitBatch(context.Background(), commitReq("t", "", 0, "by-name")); err != nil || first != 1 {
		t.Fatalf("commit by name at %d, %v", first, err)
	}
	recs := e.records(t, "t", fresh, 0)
	if len(recs) != 2 || string(recs[0].Payload) != "new" {
		t.Fatalf("new incarnation holds %+v", recs)
	}
}

// Ensure that the owner refuses partitions it does not own, and any commit
// before the ownership latch is set (G11).
func TestCommitterOwnershipChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.store.SetCaughtUp(false)
	id := e.createTopic(t, "t", 1, 3)
	if _, err := e.committer.CommitBatch(context.Background(), commitReq("t", id, 0, "x")); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("commit before the latch: %v", err)
	}
	e.store.SetCaughtUp(true)
	e.assign(t, "t", "n2", 0)
	for p := range int32(2) {
		if _, err := e.committer.CommitBatch(context.Background(), commitReq("t", id, p, "x")); !errors.Is(err, domain.ErrNotOwner) {
			t.Fatalf("partition %d: %v, want ErrNotOwner", p, err)
		}
	}
	if _, err := e.committer.CommitBatch(context.Background(), commitReq("t", id, 0)); !errors.Is(err, domain.ErrInvalidRecord) {
		t.Fatalf("empty batch: %v", err)
	}
}
