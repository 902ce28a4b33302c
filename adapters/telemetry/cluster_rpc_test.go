package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that each observation adds one request under its op and outcome
// and one round trip under its op, with the names and labels of api.md §7.
func TestClusterRPCObserverSeries(t *testing.T) {
	m := NewMetrics()
	o := m.ClusterRPC()
	o.RPCDone("ack", quicpeer.OutcomeOK, time.Millisecond)
	o.RPCDone("ack_batch", quicpeer.OutcomeOK, time.Millisecond)
	o.RPCDone("ack_batch", quicpeer.OutcomeTimeout, 2*time.Second)
	want := `
# HELP narad_cluster_rpc_requests_total Node-to-node requests this node sent, by operation and outcome.
# TYPE narad_cluster_rpc_requests_total counter
narad_cluster_rpc_requests_total{op="ack",outcome="ok"} 1
narad_cluster_rpc_requests_total{op="ack_batch",outcome="ok"} 1
narad_cluster_rpc_requests_total{op="ack_batch",outcome="timeout"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_cluster_rpc_requests_total"); err != nil {
		t.Fatal(err)
	}
	checkHistogramCounts(t, m.Registry, map[string]uint64{"narad_cluster_rpc_request_seconds": 3})
	if c := histogramCount(t, m.clusterRPC.seconds.WithLabelValues("ack_batch")); c != 2 {
		t.Fatalf("ack_batch round trips %d, want 2", c)
	}
}

// ensure that real node RPC calls through quicpeer.Peers wired with the
// node's metrics count once each on the caller: a success, an owner's
// refusal and a call to a node with no address (internals.md §10.3).
func TestClusterRPCCountsRealCalls(t *testing.T) {
	m := NewMetrics()
	secret := []byte("cluster-secret-telemetry-0123456789")
	srv, err := quicpeer.NewServer(quicpeer.ServerOptions{Secret: secret, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	quicpeer.RegisterPartitionStats(srv, ownsPartitionZero{})
	c, err := quicpeer.NewClient(quicpeer.ClientOptions{Secret: secret, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	p := quicpeer.NewPeers(c, resolver{"owner": srv.Addr().String()}, quicpeer.WithObserver(m.ClusterRPC()))

	ctx := context.Background()
	if _, err := p.PartitionStats(ctx, "owner", "t", "", []int32{0}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.PartitionStats(ctx, "owner", "t", "", []int32{1}); !errors.Is(err, domain.ErrNotOwner) {
		t.Fatalf("refusal: %v", err)
	}
	if _, err := p.PartitionStats(ctx, "gone", "t", "", []int32{0}); !errors.Is(err, quicpeer.ErrNoAddress) {
		t.Fatalf("unknown node: %v", err)
	}
	want := `
# HELP narad_cluster_rpc_requests_total Node-to-node requests this node sent, by operation and outcome.
# TYPE narad_cluster_rpc_requests_total counter
narad_cluster_rpc_requests_total{op="topic_partition_stats",outcome="error"} 1
narad_cluster_rpc_requests_total{op="topic_partition_stats",outcome="ok"} 1
narad_cluster_rpc_requests_total{op="topic_partition_stats",outcome="rejected"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_cluster_rpc_requests_total"); err != nil {
		t.Fatal(err)
	}
	checkHistogramCounts(t, m.Registry, map[string]uint64{"narad_cluster_rpc_request_seconds": 3})
}

// ownsPartitionZero answers partition 0 and refuses every other.
type ownsPartitionZero struct{}

func (ownsPartitionZero) PartitionStats(_ context.Context, _ string, _ domain.TopicID, parts []int32) ([]ports.LogStats, error) {
	for _, p := range parts {
		if p != 0 {
			return nil, fmt.Errorf("partition %d: %w", p, domain.ErrNotOwner)
		}
	}
	return make([]ports.LogStats, len(parts)), nil
}

type resolver map[string]string

func (r resolver) Addr(node string) (string, bool) {
	a, ok := r[node]
	return a, ok
}
