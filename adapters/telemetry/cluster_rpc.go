package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/narad/narad/adapters/quicpeer"
)

var _ quicpeer.Observer = (*ClusterRPCMetrics)(nil)

// ClusterRPCMetrics records the node RPC this node sends (internals.md
// §10.3, api.md §7): narad_cluster_rpc_requests_total{op,outcome} and
// narad_cluster_rpc_request_seconds{op}, one observation per call on the
// caller. It implements quicpeer.Observer.
type ClusterRPCMetrics struct {
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
}

func newClusterRPCMetrics(r prometheus.Registerer) *ClusterRPCMetrics {
	c := &ClusterRPCMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "narad_cluster_rpc_requests_total",
			Help: "Node-to-node requests this node sent, by operation and outcome."}, []string{"op", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "narad_cluster_rpc_request_seconds",
			Help:    "Round trip of node-to-node requests this node sent.",
			Buckets: prometheus.ExponentialBuckets(rpcBucketStartSeconds, bucketFactor, rpcBuckets)}, []string{"op"}),
	}
	r.MustRegister(c.requests, c.seconds)
	return c
}

// ClusterRPC returns the node RPC client's observer
// (quicpeer.WithObserver).
func (m *Metrics) ClusterRPC() *ClusterRPCMetrics { return m.clusterRPC }

// RPCDone implements quicpeer.Observer.
func (c *ClusterRPCMetrics) RPCDone(op, outcome string, took time.Duration) {
	c.requests.WithLabelValues(op, outcome).Inc()
	c.seconds.WithLabelValues(op).Observe(took.Seconds())
}
