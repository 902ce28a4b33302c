package consume

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/lease"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Deps are the ports the Service drives. Every field but Peers and Logger
// is required.
type Deps struct {
	Topics  ports.MetadataTopics
	Cluster ports.MetadataCluster
	Logs    ports.PartitionReader
	Offsets ports.OffsetStore
	Clock   ports.Clock
	Metrics ports.Metrics
	// SelfID is this node's member id: a partition is local when its
	// assignment's Owner equals it.
	SelfID string
	// Seeds feeds each shard's nonce stream (32 bytes per shard); give it a
	// cryptographic source so receipt handles cannot be guessed.
	Seeds io.Reader
	// Peers carries consumes and settles to other nodes' partitions
	// (internals.md §5.5, §5.9); nil serves local partitions only, and a
	// request for another owner's partition answers domain.ErrNotOwner.
	Peers ports.PeerForwarder
	// Tokens carries delivery tokens (internals.md §5.5): this node's
	// registrations with other owners, and its notifications to nodes that
	// left tokens here. nil keeps routed consumers polling the other
	// owners and answers no notification. Only meaningful with Peers.
	Tokens ports.TokenPeers
	// Receives keeps each partition's receive counts for topics with a
	// dead-letter policy, and DeadLetters writes their dead letters
	// (issue 19). With either nil dead-letter policies are not applied:
	// nothing is counted and nothing dead-lettered.
	Receives    ports.ReceiveLog
	DeadLetters ports.DeadLetterSink
	// Logger receives the use case's warnings; nil discards them.
	Logger *slog.Logger
}

// Options tune the Service; zero values take the spec's defaults.
type Options struct {
	// DurabilityInterval is storage.consumer_offset_commit_interval_ms
	// (10 ms .. 60 s, default 1 s).
	DurabilityInterval time.Duration
	// MaxInFlightPerIdentity is http.max_consume_in_flight_per_identity
	// (default 1024).
	MaxInFlightPerIdentity int
	// PurgeInterval is the expiry purger's period (default 1 s).
	PurgeInterval time.Duration
}

// Service is the consume use case of one node. Safe for concurrent use.
type Service struct {
	topics  ports.MetadataTopics
	cluster ports.MetadataCluster
	logs    ports.PartitionReader
	clock   ports.Clock
	metrics ports.Metrics
	peers   ports.PeerForwarder // nil: local partitions only
	// tokenPeers carries delivery tokens (nil: none); tokens are those other
	// nodes left here, regs those this node left elsewhere.
	tokenPeers ports.TokenPeers
	tokens     *tokenBook
	regs       *tokenRegs
	// background tracks token notifications in flight; Run waits for them.
	background sync.WaitGroup
	self       string
	log        *slog.Logger

	receiveLog  ports.ReceiveLog     // nil: no dead-letter policy applies
	deadLetters ports.DeadLetterSink // nil: no dead-letter policy applies

	seedMu sync.Mutex
	seeds  io.Reader

	shards    shardTable
	admission admission
	pump      *pump
	committer *committer
	purgeIvl  time.Duration
	rotor     atomic.Uint32
	closed    atomic.Bool
}

// New checks the wiring and returns a Service. Run drives its background
// work; Close persists every frontier exactly.
func New(d Deps, o Options) (*Service, error) {
	if d.Topics == nil || d.Cluster == nil || d.Logs == nil || d.Offsets == nil ||
		d.Clock == nil || d.Metrics == nil || d.Seeds == nil || d.SelfID == "" {
		return nil, errors.New("consume: Topics, Cluster, Logs, Offsets, Clock, Metrics, Seeds and SelfID are required")
	}
	if o.DurabilityInterval == 0 {
		o.DurabilityInterval = DurabilityIntervalDefault
	}
	if o.DurabilityInterval < DurabilityIntervalMin || o.DurabilityInterval > DurabilityIntervalMax {
		return nil, fmt.Errorf("consume: durability interval %v outside %v..%v", o.DurabilityInterval, DurabilityIntervalMin, DurabilityIntervalMax)
	}
	if o.MaxInFlightPerIdentity <= 0 {
		o.MaxInFlightPerIdentity = consumeCapDefault
	}
	if o.PurgeInterval <= 0 {
		o.PurgeInterval = PurgeIntervalDefault
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{
		topics: d.Topics, cluster: d.Cluster, logs: d.Logs, clock: d.Clock, metrics: d.Metrics,
		peers: d.Peers, self: d.SelfID, log: log, seeds: d.Seeds, purgeIvl: o.PurgeInterval,
		tokens: newTokenBook(), regs: newTokenRegs(),
		receiveLog: d.Receives, deadLetters: d.DeadLetters,
		shards:    shardTable{m: map[domain.PartitionRef]*shard{}},
		admission: admission{limit: o.MaxInFlightPerIdentity, inFlight: map[string]int{}},
	}
	if d.Peers != nil {
		s.tokenPeers = d.Tokens
	}
	s.pump = newPump(s)
	s.committer = newCommitter(d.Offsets, d.Clock, log, o.DurabilityInterval)
	return s, nil
}

// Run drives the pump, the delivery-token keeper, the offset committer and
// the expiry purger until ctx ends. Call it once.
func (s *Service) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var loops sync.WaitGroup
		loops.Go(func() { s.pump.run(ctx) })
		loops.Go(func() { s.keepTokens(ctx) })
		loops.Wait()
		s.background.Wait()
	}()
	tick := time.NewTicker(s.committer.tick)
	defer tick.Stop()
	purge := time.NewTicker(s.purgeIvl)
	defer purge.Stop()
	for {
		select {
		case <-ctx.Done():
			<-done
			return nil
		case <-tick.C:
			s.committer.runTick()
		case <-purge.C:
			s.purgeExpired()
		}
	}
}

// Close writes, syncs and levels every partition's progress exactly, then
// closes the offset store. Call it after Run returned; later calls fail
// with domain.ErrClosed.
func (s *Service) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.committer.close(s.shards.all())
}

// Forget drops the consumer state of a topic incarnation (its shards, its
// parked consumers and the committer's memory of its partitions). The topic
// delete path calls it after the partitions were removed, so a recreated
// topic never adopts the old frontier (story F29).
func (s *Service) Forget(topic string, id domain.TopicID) {
	for _, sh := range s.shards.drop(topic, id) {
		s.committer.forget(sh.ref)
		s.forgetReceives(sh.ref)
	}
	s.pump.dropTopic(topic, id)
	s.tokens.drop(topic)
}

// ForgetPartition drops one partition's consumer state (its shard and the
// committer's memory of it, the offset store's descriptors included), so
// the next touch loads the progress from disk again. A move's destination
// calls it around the install of a copy (internals.md §11.3 step 6): state
// left from an earlier time this node owned the partition must not mix
// with the copy's.
func (s *Service) ForgetPartition(ref domain.PartitionRef) {
	s.shards.dropRef(ref)
	s.committer.forget(ref)
	s.forgetReceives(ref)
}

// InFlight counts ref's outstanding leases on this node: a move's source
// waits briefly for them to settle before its final capture (internals.md
// §11.3 step 3). A partition never touched here has none.
func (s *Service) InFlight(ref domain.PartitionRef) int {
	s.shards.mu.Lock()
	sh, ok := s.shards.m[ref]
	s.shards.mu.Unlock()
	if !ok {
		return 0
	}
	select {
	case <-sh.ready:
	default:
		return 0 // still loading its frontier: nothing leased yet
	}
	if sh.err != nil {
		return 0
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gone {
		return 0
	}
	return sh.l.InFlight()
}

func (s *Service) checkOpen() error {
	if s.closed.Load() {
		return fmt.Errorf("consume: %w", domain.ErrClosed)
	}
	return nil
}

// topic reads a topic from the local replica.
func (s *Service) topic(name string) (meta.Topic, error) {
	t, ok, err := s.topics.Topic(name)
	switch {
	case err != nil:
		return meta.Topic{}, fmt.Errorf("consume: read topic %s: %w", name, err)
	case !ok:
		return meta.Topic{}, domain.ErrTopicNotFound
	case t.IsRemoteStub():
		return meta.Topic{}, domain.Refuse(domain.ErrConflict,
			fmt.Sprintf("remote child %q lives on remote %s; consume it there", name, t.Remote.Name))
	}
	return t, nil
}

// placement says where a partition of t is served.
type placement int

const (
	unassigned placement = iota
	local
	remote
)

// placementOf says where partition p of t is served and, when remote, by
// which node.
func (s *Service) placementOf(t meta.Topic, p int32) (placement, string, error) {
	a, ok, err := s.cluster.Assignment(t.Name, p)
	switch {
	case err != nil:
		return unassigned, "", fmt.Errorf("consume: read assignment %s/%d: %w", t.Name, p, err)
	case !ok || !a.BelongsTo(t.ID) || a.Owner == "":
		return unassigned, "", nil
	case a.Owner == s.self:
		return local, s.self, nil
	}
	return remote, a.Owner, nil
}

// localPartitions lists t's partitions this node owns, in order.
func (s *Service) localPartitions(t meta.Topic) ([]int32, error) {
	var out []int32
	self, parts, id := s.self, t.Partitions, t.ID // the closure escapes: not t itself
	err := s.cluster.EachAssignment(t.Name, func(a meta.Assignment) {
		if a.Owner == self && a.Partition < parts && a.BelongsTo(id) {
			out = append(out, a.Partition)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("consume: read assignments of %s: %w", t.Name, err)
	}
	return out, nil
}

func refOf(t meta.Topic, p int32) domain.PartitionRef {
	return domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: p}
}

func capsOf(t meta.Topic) lease.Caps {
	c := lease.Caps{MaxInFlight: int(t.MaxInFlight), MaxAckedAhead: int(t.MaxAckedAhead)}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = maxInFlightDefault
	}
	if c.MaxAckedAhead <= 0 {
		c.MaxAckedAhead = maxAckedAheadDefault
	}
	return c
}

func visibilityOf(t meta.Topic) int64 {
	if t.VisibilityTimeoutMs <= 0 {
		return visibilityDefaultMs
	}
	return t.VisibilityTimeoutMs
}

func (s *Service) nowMs() int64 { return s.clock.Now().UnixMilli() }

// seed draws a fresh nonce-stream seed for a new shard.
func (s *Service) seed() ([32]byte, error) {
	var b [32]byte
	s.seedMu.Lock()
	defer s.seedMu.Unlock()
	if _, err := io.ReadFull(s.seeds, b[:]); err != nil {
		return b, fmt.Errorf("consume: draw a shard seed: %w", err)
	}
	return b, nil
}

// purgeExpired drops expired leases on every shard and wakes the consumers
// parked on topics that got offsets back.
func (s *Service) purgeExpired() {
	now := s.nowMs()
	for _, sh := range s.shards.all() {
		sh.mu.Lock()
		n := 0
		if !sh.gone {
			n = sh.l.Purge(now)
		}
		sh.mu.Unlock()
		if n > 0 {
			s.pump.wake(sh.ref.Topic)
		}
	}
}

// Parked is how many consumers are parked in long polls on this node (a
// gauge for metrics and tests).
func (s *Service) Parked() int { return int(s.pump.parked.Load()) }
