package consume

import (
	"github.com/narad/narad/domain/lease"
	"github.com/narad/narad/domain/meta"
)

// backoffOf is t's redelivery backoff for its partitions' shards (the zero
// Backoff, none, when the topic has no policy): after a message's nth
// delivery ends in a plain nack or a lapsed lease, the shard holds it out
// of delivery for min(InitialMs*Multiplier^(n-1), MaxMs) less its jitter.
// The hold is a deferred lease, counted in ShardStats.Deferred like a nack
// with a delay; an explicit nack delay wins over the policy.
func backoffOf(t meta.Topic) lease.Backoff {
	r := t.Redelivery
	if r == nil {
		return lease.Backoff{}
	}
	return lease.Backoff{InitialMs: r.InitialMs, Multiplier: r.Multiplier, MaxMs: r.MaxMs, Jitter: r.Jitter}
}
