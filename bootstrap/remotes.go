package bootstrap

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/netip"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/adapters/remotehttp"
	"github.com/narad/narad/adapters/remotekeys"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/application/shipping"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// remotesModule is the remote plane (internals.md §7): the keyring of the
// cluster secret, the guarded outbound transport, this node's credential
// cache, the remotes use cases and the shipper at the end of remote
// children's fan-out cursors.
var remotesModule = fx.Module("remotes",
	fx.Provide(
		newRemoteKeyring,
		newRemoteTransport,
		newRemoteCache,
		newRemotesService,
		newShipper,
	),
)

func newRemoteKeyring(cfg config.Config) ports.RemoteKeyring {
	return remotekeys.New(cfg.Secrets.ClusterSecret, cfg.Secrets.ClusterSecretPrevious)
}

func newRemoteTransport(cfg config.Config) (ports.RemoteTransport, error) {
	allow := make([]netip.Prefix, 0, len(cfg.Remotes.AllowAddresses))
	for _, a := range cfg.Remotes.AllowAddresses {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return nil, fmt.Errorf("remotes.allow_addresses: %w", err)
		}
		allow = append(allow, p)
	}
	return remotehttp.New(remotehttp.Options{AllowedPorts: cfg.Remotes.AllowedPorts, AllowedHosts: cfg.Remotes.AllowedHosts, AllowAddresses: allow})
}

func newRemoteCache(lc fx.Lifecycle, cfg config.Config, s ports.MetadataStore, k ports.RemoteKeyring, t ports.RemoteTransport) *remotes.Cache {
	c := remotes.NewCache(remotes.CacheDeps{Store: s, Keyring: k, Transport: t, Secured: cfg.Security.Enabled})
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
	Shipper   *shipping.Shipper
}

func newRemotesService(cfg config.Config, id NodeIdentity, d remotesDeps, cache *remotes.Cache) (*remotes.Service, error) {
	return remotes.New(remotes.Options{Self: id.ID, APIHopEncrypted: cfg.Remotes.APIHopEncrypted, RaftTLS: cfg.Security.ClusterTLSCertFile != ""},
		remotes.Deps{Store: d.Store, Keyring: d.Keyring, Transport: d.Transport, Clock: d.Clock, Audit: d.Audit, Random: rand.Reader,
			Bounds: d.Logs, PeerStats: d.Peers, Stuck: stuckAsker{self: id.ID, shipper: d.Shipper}}, cache)
}

func newShipper(cfg config.Config, s ports.MetadataStore, cache *remotes.Cache, c ports.Clock, log *zap.Logger) *shipping.Shipper {
	return shipping.New(shipping.Deps{Store: s, Clients: cache, Clock: c, MaxHeldBytes: cfg.Remotes.MaxHeldBytes,
		Log: newSlog(log.With(zap.String("component", "remotes")))})
}

// stuckAsker answers where a remote child's cursor is stuck: this node's
// shipper for its own cursors.
type stuckAsker struct {
	self    string
	shipper *shipping.Shipper
}

func (a stuckAsker) BlockedAt(_ context.Context, node, parent string, partition int32, child string) (remotes.Blocked, error) {
	if node != a.self {
		return remotes.Blocked{}, fmt.Errorf("node %s runs that cursor; ask it there", node)
	}
	off, state := a.shipper.BlockedAt(parent, partition, child)
	return remotes.Blocked{Offset: off, State: state}, nil
}
