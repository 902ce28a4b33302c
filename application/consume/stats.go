package consume

import "github.com/narad/narad/domain"

// ShardStats is one local partition's consumer state, for the per-partition
// gauges of api.md §7 (narad_inflight_size, narad_acked_ahead_size,
// narad_consumer_lag_messages with the log's high watermark).
type ShardStats struct {
	Ref        domain.PartitionRef
	InFlight   int
	AckedAhead int
	// Committed is the frontier: every offset at or below it is settled.
	Committed int64
	// Dropped counts unsettled records retention deleted (frontier jumps).
	Dropped int64
	// Deferred counts the leases held by a nack with a delay or by the
	// topic's redelivery backoff (part of InFlight).
	Deferred int
}

// Stats returns the state of every live shard. It takes each shard's lock
// briefly and never creates one.
func (s *Service) Stats() []ShardStats {
	var out []ShardStats
	for _, sh := range s.shards.all() {
		select {
		case <-sh.ready:
		default:
			continue // still being created
		}
		if sh.err != nil {
			continue
		}
		sh.mu.Lock()
		if !sh.gone {
			out = append(out, ShardStats{Ref: sh.ref, InFlight: sh.l.InFlight(), AckedAhead: len(sh.l.AckedAhead()), Committed: sh.l.Committed(), Dropped: sh.l.Dropped(), Deferred: sh.l.Deferred()})
		}
		sh.mu.Unlock()
	}
	return out
}
