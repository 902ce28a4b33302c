package consume_test

import (
	"testing"

	"github.com/narad/narad/application/consume"
)

// ensure that Stats reports each touched partition's leases, acked-ahead set and frontier.
func TestStatsReportsShards(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "0", "1", "2")
	d0, d1 := e.one("orders", 0), e.one("orders", 0)
	e.ack("orders", d1)
	_ = d0
	st := e.svc.Stats()
	if len(st) != 1 || st[0].Ref.Topic != "orders" || st[0].InFlight != 1 || st[0].AckedAhead != 1 || st[0].Committed != -1 {
		t.Fatalf("stats %+v", st)
	}
	e.ack("orders", d0)
	if st := e.svc.Stats(); st[0].Committed != 1 || st[0].AckedAhead != 0 || st[0].InFlight != 0 {
		t.Fatalf("after acking the frontier %+v", st)
	}
}
