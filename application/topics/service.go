package topics

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/releasegate"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ErrInvalidConfig reports a Service built with missing dependencies or
// impossible defaults.
var ErrInvalidConfig = errors.New("topics: invalid configuration")

// Defaults are the node's settings for new topics (config section topic).
type Defaults struct {
	Partitions    int   // topic.default_partitions
	MaxPartitions int   // topic.max_partitions
	RetentionMs   int64 // topic.default_retention_age_ms; 0 keeps forever
	VisibilityMs  int64 // topic.default_visibility_timeout_ms
	MaxInFlight   int64 // topic.default_max_in_flight_per_partition
	MaxAckedAhead int64 // topic.default_max_acked_ahead_per_partition
}

func (d Defaults) validate() error {
	switch {
	case d.MaxPartitions < PartitionsMinCount || d.MaxPartitions > meta.PartitionsMaxCount:
		return fmt.Errorf("max partitions %d outside %d..%d: %w", d.MaxPartitions, PartitionsMinCount, meta.PartitionsMaxCount, ErrInvalidConfig)
	case d.Partitions < PartitionsMinCount || d.Partitions > d.MaxPartitions:
		return fmt.Errorf("default partitions %d outside %d..%d: %w", d.Partitions, PartitionsMinCount, d.MaxPartitions, ErrInvalidConfig)
	case d.RetentionMs != 0 && d.RetentionMs < RetentionFloorMs:
		return fmt.Errorf("default retention %d ms is neither 0 nor >= %d: %w", d.RetentionMs, RetentionFloorMs, ErrInvalidConfig)
	case d.VisibilityMs <= 0 || d.MaxInFlight <= 0 || d.MaxAckedAhead <= 0:
		return fmt.Errorf("visibility and per-partition caps must be positive: %w", ErrInvalidConfig)
	}
	return nil
}

// Service runs the topic use cases of one node. Safe for concurrent use:
// create, alter and delete of one name are serialised on this node.
type Service struct {
	store    ports.MetadataStore
	logs     ports.PartitionLogs
	schemas  ports.SchemaValidator
	clock    ports.Clock
	confirm  *leaderconfirm.Confirmer
	defaults Defaults
	self     string

	randMu sync.Mutex
	random io.Reader

	peers ports.PeerStats // nil: other owners' partitions cannot be asked

	servers releasegate.Servers // nil: the release gate reads member records only

	fanoutLag FanoutLag           // nil: this node's cursors cannot be read
	peerLag   ports.PeerFanoutLag // nil: other owners' cursors cannot be asked

	names nameLocks
	place sync.Locker // the assignment lock: one placement at a time
}

// Option configures a Service beyond its required ports.
type Option func(*Service)

// WithPlacementLock makes l the assignment lock this Service's placements
// take, shared with the controller's sweep (internals §8.7: creates and the
// sweep share one lock). Without it the Service has a lock of its own.
func WithPlacementLock(l sync.Locker) Option { return func(s *Service) { s.place = l } }

// WithPeerStats lets the Service ask other owners for their partitions'
// statistics (describe, and the attach point of a create-as-child). Without
// it those partitions are placeholders and an attach over a remote parent
// partition answers domain.ErrUnavailable.
func WithPeerStats(p ports.PeerStats) Option { return func(s *Service) { s.peers = p } }

// WithFanoutLag lets a children listing read where the fan-out cursors of
// the parent partitions this node owns stand. Without it those partitions
// never report, so no child's lag is complete.
func WithFanoutLag(l FanoutLag) Option { return func(s *Service) { s.fanoutLag = l } }

// WithPeerFanoutLag lets a children listing ask other owners where the
// cursors of their parent partitions stand (node RPC op 17). Without it
// those partitions never report.
func WithPeerFanoutLag(p ports.PeerFanoutLag) Option { return func(s *Service) { s.peerLag = p } }

// New returns a Service. random supplies incarnation ids (crypto/rand in
// production); selfID is this node's member id.
func New(store ports.MetadataStore, logs ports.PartitionLogs, schemas ports.SchemaValidator,
	clock ports.Clock, random io.Reader, defaults Defaults, selfID string, opts ...Option) (*Service, error) {
	if store == nil || logs == nil || schemas == nil || clock == nil || random == nil {
		return nil, fmt.Errorf("nil dependency: %w", ErrInvalidConfig)
	}
	if selfID == "" {
		return nil, fmt.Errorf("empty node id: %w", ErrInvalidConfig)
	}
	if err := defaults.validate(); err != nil {
		return nil, err
	}
	s := &Service{
		store: store, logs: logs, schemas: schemas, clock: clock, random: random,
		confirm: leaderconfirm.New(store), defaults: defaults, self: selfID,
		names: nameLocks{held: map[string]*nameLock{}}, place: &sync.Mutex{},
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// newTopicID mints an incarnation id: 8 random bytes as 16 hex characters.
func (s *Service) newTopicID() (string, error) { return s.randomHex(topicIDBytes, "id") }

// randomHex reads n random bytes and returns them as lowercase hex; what
// names the value in the error.
func (s *Service) randomHex(n int, what string) (string, error) {
	b := make([]byte, n)
	s.randMu.Lock()
	_, err := io.ReadFull(s.random, b)
	s.randMu.Unlock()
	if err != nil {
		return "", fmt.Errorf("topics: read random %s: %w", what, err)
	}
	return hex.EncodeToString(b), nil
}

// envelope stamps ev with the proposer's clock and who asked for it (a
// username, the client address with security off, or "node:<id>" for this
// node's own work), which the metadata journal records.
func (s *Service) envelope(actor string, ev meta.Event) meta.Envelope {
	return meta.Envelope{Actor: actor, AtMs: s.clock.Now().UnixMilli(), Event: ev}
}

// readTopic reads name from the local replica: domain.ErrTopicNotFound when
// absent.
func (s *Service) readTopic(name string) (meta.Topic, error) {
	t, ok, err := s.store.Topic(name)
	switch {
	case err != nil:
		return meta.Topic{}, readFailure(err)
	case !ok:
		return meta.Topic{}, domain.ErrTopicNotFound
	}
	return t, nil
}

// readFailure maps a local metadata read error: a stopped or lagging replica
// is transient (503), anything else is internal.
func readFailure(err error) error {
	if errors.Is(err, meta.ErrStopped) || errors.Is(err, meta.ErrNotCaughtUp) || errors.Is(err, meta.ErrUnavailable) {
		return domain.Refuse(domain.ErrUnavailable, "metadata unavailable on this node: "+err.Error())
	}
	return fmt.Errorf("topics: read metadata: %w", err)
}

// proposeFailure maps a Propose error. Only an invalid event is certain not
// to apply, and it means a bug here; anything else may still apply.
func proposeFailure(err error) error {
	if errors.Is(err, meta.ErrInvalidEvent) {
		return fmt.Errorf("topics: proposal refused as invalid: %w", err)
	}
	return domain.Refuse(domain.ErrUnavailable,
		"control plane temporarily unavailable: the change may still be applied, read it back before retrying: "+err.Error())
}

// nameLocks serialises create, alter and delete per topic name on this node.
type nameLocks struct {
	mu   sync.Mutex
	held map[string]*nameLock
}

type nameLock struct {
	mu   sync.Mutex
	refs int
}

// lock takes name's lock and returns its release.
func (n *nameLocks) lock(name string) (unlock func()) {
	n.mu.Lock()
	l, ok := n.held[name]
	if !ok {
		l = &nameLock{}
		n.held[name] = l
	}
	l.refs++
	n.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		n.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(n.held, name)
		}
		n.mu.Unlock()
	}
}
