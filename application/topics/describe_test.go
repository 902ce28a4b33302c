package topics_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Ensure that a fully local topic describes every partition with its real
// log statistics (segments, bytes, offsets, oldest segment time), status ok
// and this node as owner, and no partial flag (conformance 47, 48; api.md
// §2.4 partition statistics).
func TestDescribeLocalPartitions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "details"})
	f.commit(t, tp, 1, 3)
	d := f.describe(t, "details")
	if d.Partial || d.SchemaVersion != 0 || d.Schema != nil || len(d.Stats) != 3 {
		t.Fatalf("describe: %+v", d)
	}
	for i, st := range d.Stats {
		want := topics.PartitionStats{Index: int32(i), OwnerNode: self, Status: topics.StatusOK}
		if i == 1 { // the fake: one segment holding 3 one-byte payloads, written at its clock
			want.Segments, want.NextOffset, want.HighWatermark, want.SizeBytes = 1, 3, 3, 3
			want.OldestSegmentAt = f.logs.Now().Unix()
		}
		if st != want {
			t.Fatalf("partition %d: %+v, want %+v", i, st, want)
		}
	}
}

// Ensure that describe passes the log's own statistics through: after
// retention the oldest offset, the bytes and the oldest segment time are
// those of what is retained (api.md §2.4).
func TestDescribeReportsRetainedRange(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "aged", RetentionMs: ptr(int64(3_600_000))})
	f.logs.SetRetention(tp.Name, domain.TopicID(tp.ID), time.Hour)
	f.commit(t, tp, 0, 4)
	f.logs.Advance(2 * time.Hour)
	f.commit(t, tp, 0, 1)
	st := f.describe(t, "aged").Stats[0]
	if st.Status != topics.StatusOK || st.OldestOffset != 4 || st.HighWatermark != 5 || st.NextOffset != 5 ||
		st.SizeBytes != 1 || st.OldestSegmentAt != f.logs.Now().Unix() {
		t.Fatalf("partition 0 after retention: %+v", st)
	}
}

// Ensure that partitions owned elsewhere are placeholders saying why, never
// zeros with status ok (api.md §2.4, B.3 Replay; conformance 175 shape).
func TestDescribePlaceholders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, self, "n2", "n3")
	tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "spread", Partitions: 4})
	f.propose(t, &meta.MarkMemberDeadIf{ID: "n3", Heartbeat: startTime.Unix()})
	f.propose(t, &meta.UpdateTopicIf{UpdateTopic: meta.UpdateTopic{Name: "spread", Partitions: 5, RetentionMs: tp.RetentionMs,
		MaxInFlight: tp.MaxInFlight, MaxAckedAhead: tp.MaxAckedAhead}, ID: tp.ID})
	d := f.describe(t, "spread")
	want := []struct{ owner, status, liveness string }{
		{self, topics.StatusOK, ""},
		{"n2", topics.StatusOwnerUnavailable, topics.LivenessUnreachable},
		{"n3", topics.StatusOwnerUnavailable, topics.LivenessDead},
		{self, topics.StatusOK, ""},
		{"", topics.StatusOwnerUnavailable, topics.LivenessUnassigned},
	}
	if !d.Partial || len(d.Stats) != len(want) {
		t.Fatalf("describe: %+v", d)
	}
	for i, w := range want {
		st := d.Stats[i]
		if st.OwnerNode != w.owner || st.Status != w.status || st.OwnerLiveness != w.liveness {
			t.Fatalf("partition %d: %v, want %+v", i, st, w)
		}
	}
}

// Ensure that ?partition selects one entry and an index out of range is
// "invalid partition" (conformance 50), and a missing topic is 404
// (conformance 49).
func TestDescribeOnePartitionAndMissing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
	d, err := f.svc.Describe(context.Background(), topics.DescribeRequest{Caller: anyone, Name: "t", Partition: 1, HasPartition: true})
	if err != nil || len(d.Stats) != 1 || d.Stats[0].Index != 1 {
		t.Fatalf("one partition: %+v %v", d, err)
	}
	_, err = f.svc.Describe(context.Background(), topics.DescribeRequest{Caller: anyone, Name: "t", Partition: 3, HasPartition: true})
	wantRefusal(t, err, domain.ErrInvalidArgument, "invalid partition")
	_, err = f.svc.Describe(context.Background(), topics.DescribeRequest{Caller: anyone, Name: "missing"})
	wantRefusal(t, err, domain.ErrTopicNotFound, "")
}

// Ensure that a partition this node owns but never wrote reports its empty
// bounds with status ok, not a placeholder.
func TestDescribeNeverOpenedPartition(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "idle"})
	for _, st := range f.describe(t, "idle").Stats {
		if st.Status != topics.StatusOK || st.HighWatermark != 0 {
			t.Fatalf("idle partition: %v", st)
		}
	}
}

// Ensure that the list pages by name with keyset tokens (conformance 40-43,
// 45, 46).
func TestListPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	page, err := f.svc.List(ctx, anyone, "", 0)
	if err != nil || page.Topics == nil || len(page.Topics) != 0 || page.Next != "" {
		t.Fatalf("empty list: %+v %v", page, err)
	}
	for _, n := range []string{"d", "b", "a", "c"} {
		f.create(t, topics.CreateRequest{Caller: anyone, Name: n})
	}
	names := func(p topics.Page) string {
		s := ""
		for _, tp := range p.Topics {
			s += tp.Name
		}
		return s + "|" + p.Next
	}
	cases := []struct {
		token string
		limit int
		want  string
	}{
		{"", 2, "ab|b"}, {"b", 2, "cd|"}, {"", 4, "abcd|"}, {"zzzz", 10, "|"}, {"", 999999, "abcd|"}, {"a", 0, "bcd|"},
	}
	for _, c := range cases {
		p, err := f.svc.List(ctx, anyone, c.token, c.limit)
		if err != nil || names(p) != c.want {
			t.Fatalf("token %q limit %d: %s %v, want %s", c.token, c.limit, names(p), err, c.want)
		}
	}
}

// Ensure that the default page is 100 topics with the 100th as token
// (conformance 46).
func TestListDefaultLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.meta.SetLeader(false) // skip placement: 101 creates stay cheap
	for i := 0; i < 101; i++ {
		f.create(t, topics.CreateRequest{Caller: anyone, Name: "t" + string(rune('a'+i/26)) + string(rune('a'+i%26))})
	}
	p, err := f.svc.List(context.Background(), anyone, "", 0)
	if err != nil || len(p.Topics) != 100 || p.Next != p.Topics[99].Name {
		t.Fatalf("%d topics, next %q, %v", len(p.Topics), p.Next, err)
	}
}
