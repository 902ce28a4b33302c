package meta_test

import (
	"testing"

	"github.com/narad/narad/domain/meta"
)

// BenchmarkViewsChanged is what every applied entry pays to classify its
// writes: a heartbeat (one member row decoded and compared, the common
// entry of an idle cluster) and a topic create (prefix checks only).
func BenchmarkViewsChanged(b *testing.B) {
	kv := meta.NewMemKV()
	steps := func(index uint64, ev meta.Event) []meta.Mutation {
		_, ms, err := meta.Step(kv, index, meta.Envelope{Actor: "a", AtMs: int64(index) * 1000, Event: ev}, meta.JournalKeep)
		if err != nil {
			b.Fatal(err)
		}
		return ms
	}
	if err := meta.WriteMutations(kv, steps(1, &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"})); err != nil {
		b.Fatal(err)
	}
	cases := map[string][]meta.Mutation{
		"heartbeat": steps(2, &meta.MemberHeartbeat{ID: "n1"}),
		"create": steps(2, &meta.CreateTopic{Name: "orders", ID: "00000000000000a1", Partitions: 3,
			VisibilityTimeoutMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024, RetentionMs: 1000}),
	}
	for name, ms := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := meta.ViewsChanged(kv, ms); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
