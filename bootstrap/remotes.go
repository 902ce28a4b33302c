package bootstrap

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/netip"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/metastore"
	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/adapters/remotehttp"
	"github.com/narad/narad/adapters/remotekeys"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/adapters/wal"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/application/shipping"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// remotesModule is the remote plane (internals.md §7): the keyring of the
// cluster secret, the guarded outbound transport, this node's credential
// cache, the remotes use cases and the shipper at the end of remote
// children's fan-out cursors.
var remotesModule = fx.Module("remotes",
	fx.Provide(
		newRemoteSampler,
		newRemoteMetrics,
		newRemoteKeyring,
		newRemoteTransport,
		newRemoteCache,
		newRemotesService,
		newShipper,
		newLocalLinks,
		newBacklogScanner,
	),
	fx.Invoke(sampleRemotes, guardRemotePosture, followRemoteCache),
)

// cursors samples this node's remote child cursors, parent by parent.
func (r *remoteSampler) cursors() []telemetry.RemoteCursorSample {
	var out []telemetry.RemoteCursorSample
	seen := map[string]bool{}
	now := r.clock.Now().UnixMilli()
	for _, st := range r.shipper.Statuses() {
		parent := st.Cursor.Parent
		if seen[parent] {
			continue
		}
		seen[parent] = true
		t, _, _ := r.store.Topic(parent)
		for _, c := range r.links.RemoteLinks(parent) {
			s := telemetry.RemoteCursorSample{Parent: parent, Child: c.Child, Partition: c.Partition, State: c.State, LastOKMs: c.LastOKMs}
			if c.OldestUnsentMs > 0 {
				s.LagSeconds = float64(now-c.OldestUnsentMs) / 1000
			}
			if t.RetentionMs > 0 {
				s.HeadroomSeconds, s.HasHeadroom = float64(t.RetentionMs)/1000-s.LagSeconds, true
			}
			out = append(out, s)
		}
	}
	return out
}

// remoteSampler answers the remote gauges at scrape time; its parts are
// set once the graph is built (sampleRemotes).
type remoteSampler struct {
	store   ports.MetadataStore
	keys    ports.RemoteKeyring
	clock   ports.Clock
	links   *localLinks
	shipper *shipping.Shipper
	cache   *remotes.Cache
	allow   bool
	plain   bool
}

func newRemoteSampler(cfg config.Config, s ports.MetadataStore, c ports.Clock, k ports.RemoteKeyring) *remoteSampler {
	return &remoteSampler{store: s, keys: k, clock: c, allow: len(cfg.Remotes.AllowedHosts) > 0,
		plain: cfg.Security.ClusterTLSCertFile == "" && len(cfg.Cluster.Peers) > 0}
}

func newRemoteMetrics(m *telemetry.Metrics, r *remoteSampler) *telemetry.RemoteMetrics {
	return m.Remotes(r.sample)
}

func sampleRemotes(r *remoteSampler, sh *shipping.Shipper, c *remotes.Cache, l *localLinks) {
	r.shipper, r.cache, r.links = sh, c, l
}

func (r *remoteSampler) sample() telemetry.RemoteSample {
	out := telemetry.RemoteSample{Allowlist: r.allow, PlainRaft: r.plain}
	if r.shipper == nil {
		return out
	}
	out.HeldBytes = r.shipper.HeldBytes()
	out.Cursors = r.cursors()
	all, err := r.store.Remotes()
	if err != nil {
		return out
	}
	out.RemotesExist = len(all) > 0
	send := map[string]shipping.RemoteStatus{}
	for _, st := range r.shipper.Remotes() {
		send[st.Remote] = st
	}
	current, previous := r.keyVersions()
	now := r.clock.Now()
	var firstSealMs int64
	for _, rem := range all {
		out.Credentials = append(out.Credentials, telemetry.RemoteCredentialSample{Remote: rem.Name, State: r.cache.State(rem, "").State})
		st, sent := send[rem.Name]
		out.Remotes = append(out.Remotes, telemetry.RemoteStateSample{Remote: rem.Name, HasSendPath: sent, HasSetTime: rem.SetAtMs > 0,
			RTTSeconds: st.RTT.Seconds(), GateBackoffSeconds: st.GateBackoff.Seconds(), ChunkBytesLimit: st.ChunkBytesCap,
			CredentialAgeSeconds: now.Sub(time.UnixMilli(rem.SetAtMs)).Seconds(), CredentialKeyCurrent: rem.KeyVersion == current})
		if rem.KeyVersion == current && (firstSealMs == 0 || rem.SetAtMs < firstSealMs) {
			firstSealMs = rem.SetAtMs
		}
	}
	if firstSealMs > 0 {
		out.KeyAgeSeconds = now.Sub(time.UnixMilli(firstSealMs)).Seconds()
	}
	out.CurrentKeySeals, out.HasCurrentKey = r.keySeals(current)
	out.PreviousKeySeals, out.HasPreviousKey = r.keySeals(previous)
	return out
}

// keyVersions are the current and the previous key's versions, "" before
// the first remote, without a usable secret or, for the previous one,
// without NARAD_CLUSTER_SECRET_PREVIOUS.
func (r *remoteSampler) keyVersions() (current, previous string) {
	salt, found, err := r.store.RemoteSalt()
	if err != nil || !found || r.keys == nil {
		return "", ""
	}
	current, _ = r.keys.KeyVersion(salt)
	if v, ok, err := r.keys.PreviousKeyVersion(salt); err == nil && ok {
		previous = v
	}
	return current, previous
}

// keySeals is how many passwords key version v has sealed; false when the
// node derives no such key (v "") or the count does not read.
func (r *remoteSampler) keySeals(v string) (int64, bool) {
	if v == "" {
		return 0, false
	}
	n, err := r.store.RemoteKeySeals(v)
	return n, err == nil
}

func newRemoteKeyring(cfg config.Config) ports.RemoteKeyring {
	return remotekeys.New(cfg.Secrets.ClusterSecret, cfg.Secrets.ClusterSecretPrevious)
}

func newRemoteTransport(cfg config.Config, m *telemetry.RemoteMetrics) (ports.RemoteTransport, error) {
	allow := make([]netip.Prefix, 0, len(cfg.Remotes.AllowAddresses))
	for _, a := range cfg.Remotes.AllowAddresses {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return nil, fmt.Errorf("remotes.allow_addresses: %w", err)
		}
		allow = append(allow, p)
	}
	return remotehttp.New(remotehttp.Options{AllowedPorts: cfg.Remotes.AllowedPorts, AllowedHosts: cfg.Remotes.AllowedHosts,
		AllowAddresses: allow, Metrics: m.DestinationRefused})
}

func newRemoteCache(lc fx.Lifecycle, cfg config.Config, s ports.MetadataStore, k ports.RemoteKeyring, t ports.RemoteTransport,
	m *telemetry.RemoteMetrics) *remotes.Cache {
	c := remotes.NewCache(remotes.CacheDeps{Store: s, Keyring: k, Transport: t, Secured: cfg.Security.Enabled, Decrypted: m.Decrypted})
	lc.Append(fx.StopHook(c.Close))
	return c
}

// remotesDeps are the ports of the remotes use cases fx hands over.
type remotesDeps struct {
	fx.In
	Store     ports.MetadataStore
	Keyring   ports.RemoteKeyring
	Transport ports.RemoteTransport
	Clock     ports.Clock
	Audit     ports.AuditLog
	Logs      ports.PartitionLogs
	Peers     *quicpeer.Peers
	Links     *localLinks
	Metrics   *telemetry.RemoteMetrics
	Scanner   *produce.BacklogScanner
	Local     ports.ConsumerFrontiers
	Remote    ports.PeerFrontiers
	Raft      *metastore.Store
}

func newRemotesService(cfg config.Config, id NodeIdentity, d remotesDeps, cache *remotes.Cache) (*remotes.Service, error) {
	links := linkAsker{self: id.ID, local: d.Links, peers: d.Peers}
	return remotes.New(remotes.Options{Self: id.ID, APIHopEncrypted: cfg.Remotes.APIHopEncrypted, RaftTLS: cfg.Security.ClusterTLSCertFile != "",
		LegacyClusterAuth: cfg.Security.AllowLegacyClusterAuth},
		remotes.Deps{Store: d.Store, Keyring: d.Keyring, Transport: d.Transport, Clock: d.Clock, Audit: d.Audit, Random: rand.Reader,
			Bounds: d.Logs, PeerStats: d.Peers, Frontiers: frontiers{self: id.ID, local: d.Local, peers: d.Remote}, Stuck: links, Links: links,
			Backlogs: backlogs{self: id.ID, local: d.Scanner, peers: d.Peers}, Members: d.Peers, Servers: d.Raft, Writer: d.Peers,
			Sealed: d.Metrics.Sealed, ResealOpened: d.Metrics.ResealOpened}, cache)
}

func newShipper(cfg config.Config, s ports.MetadataStore, cache *remotes.Cache, c ports.Clock, m *telemetry.RemoteMetrics, log *zap.Logger) *shipping.Shipper {
	return shipping.New(shipping.Deps{Store: s, Clients: cache, Clock: c, MaxHeldBytes: cfg.Remotes.MaxHeldBytes, Metrics: m,
		Log: newSlog(log.With(zap.String("component", "remotes")))})
}

// localLinks reports this node's remote child cursors: the shipper's link
// states with the fan-out engine's position and lag, the parent
// partition's high watermark and, for a cursor behind, the commit time of
// the oldest record the remote has not accepted (the owner side of op 36).
type localLinks struct {
	shipper *shipping.Shipper
	engine  *fanout.Engine
	store   ports.MetadataTopics
	logs    ports.PartitionReader
}

func newLocalLinks(sh *shipping.Shipper, e *fanout.Engine, s ports.MetadataStore, logs ports.PartitionLogs) *localLinks {
	return &localLinks{shipper: sh, engine: e, store: s, logs: logs}
}

func (l *localLinks) RemoteLinks(parent string) []ports.RemoteCursorReport {
	out := l.shipper.RemoteLinks(parent)
	if len(out) == 0 {
		return out
	}
	t, found, err := l.store.Topic(parent)
	logs := l.logs
	if err != nil || !found {
		logs = nil // no incarnation to read the parent's logs of
	}
	return withPositions(out, l.engine.Cursors(), domain.PartitionRef{Topic: parent, TopicID: domain.TopicID(t.ID)}, logs)
}

// linkAsker reads remote child cursors: this node's own, node RPC op 36
// for another node's.
type linkAsker struct {
	self  string
	local ports.RemoteLinks
	peers ports.PeerRemoteLinks
}

func (a linkAsker) RemoteLinks(ctx context.Context, node, parent string) ([]ports.RemoteCursorReport, error) {
	if node == a.self {
		return a.local.RemoteLinks(parent), nil
	}
	return a.peers.RemoteLinks(ctx, node, parent)
}

func (a linkAsker) BlockedAt(ctx context.Context, node, parent string, partition int32, child string) (remotes.Blocked, error) {
	reports, err := a.RemoteLinks(ctx, node, parent)
	if err != nil {
		return remotes.Blocked{}, err
	}
	for _, r := range reports {
		if r.Partition == partition && r.Child == child {
			return remotes.Blocked{Offset: r.BlockedAt, State: r.State}, nil
		}
	}
	return remotes.Blocked{Offset: -1}, nil
}

// frontiers reads consumer frontiers from this node or from the owner.
type frontiers struct {
	self  string
	local ports.ConsumerFrontiers
	peers ports.PeerFrontiers
}

func (f frontiers) Unconsumed(ctx context.Context, node, topic string, id domain.TopicID, parts []int32) ([]int64, error) {
	if node == f.self {
		return f.local.Unconsumed(ctx, topic, id, parts)
	}
	return f.peers.Unconsumed(ctx, node, topic, id, parts)
}

// newBacklogScanner counts a topic's records in this node's dispatch
// backlog (the unshipped check, internals.md §7.9).
func newBacklogScanner(w *wal.WAL) *produce.BacklogScanner { return produce.NewBacklogScanner(w) }

// backlogs reads a member's dispatch backlog of one topic: this node's own
// scan, or another's over node RPC op 36.
type backlogs struct {
	self  string
	local *produce.BacklogScanner
	peers ports.PeerRemoteMembers
}

func (b backlogs) TopicBacklog(ctx context.Context, node, topic string) (ports.TopicBacklog, error) {
	if node == b.self {
		return b.local.TopicBacklog(ctx, topic)
	}
	return b.peers.TopicBacklog(ctx, node, topic)
}

// guardRemotePosture stops a node whose metadata holds a remote while it
// runs with security off or without a usable cluster secret (api.md §6.3):
// it could neither open the passwords nor guard the remotes API. The check
// waits for the replica to catch up, then reads the remotes once.
func guardRemotePosture(lc fx.Lifecycle, sd fx.Shutdowner, cfg config.Config, s ports.MetadataStore, k ports.RemoteKeyring, log *zap.Logger) {
	runWorker(lc, func(ctx context.Context) {
		if err := waitCaughtUp(ctx, s); err != nil {
			return
		}
		all, err := s.Remotes()
		if err != nil || len(all) == 0 {
			return
		}
		reason := ""
		switch {
		case !cfg.Security.Enabled:
			reason = "security is off"
		case k.CanSeal() != nil:
			reason = k.CanSeal().Error()
		default:
			return
		}
		log.Error("this cluster holds remotes, which need security on and a generated NARAD_CLUSTER_SECRET; stopping",
			zap.String("reason", reason), zap.Int("remotes", len(all)))
		_ = sd.Shutdown(fx.ExitCode(remotePostureExitCode))
	})
}

// remotePostureExitCode is the exit code of a node stopped by the remote
// posture guard.
const remotePostureExitCode = 2

// remoteMember answers op 36 for this node: its remote child cursors, the
// target checks run from it, its credential states and posture, a topic's
// dispatch backlog.
type remoteMember struct {
	*localLinks
	*remotes.Service
	*produce.BacklogScanner
}

// followRemoteCache drops the credential cache entries of deleted remotes
// as the metadata applies the deletes (internals.md §7.6).
func followRemoteCache(lc fx.Lifecycle, c *remotes.Cache, s ports.MetadataStore) {
	runWorker(lc, func(ctx context.Context) { c.Follow(ctx, s) })
}
