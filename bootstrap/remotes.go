package bootstrap

import (
	"crypto/rand"
	"fmt"
	"net/netip"

	"go.uber.org/fx"
	"go.uber.org/zap"

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

func newRemotesService(cfg config.Config, id NodeIdentity, s ports.MetadataStore, k ports.RemoteKeyring, t ports.RemoteTransport,
	c ports.Clock, a ports.AuditLog, cache *remotes.Cache) (*remotes.Service, error) {
	return remotes.New(remotes.Options{Self: id.ID, APIHopEncrypted: cfg.Remotes.APIHopEncrypted, RaftTLS: cfg.Security.ClusterTLSCertFile != ""},
		remotes.Deps{Store: s, Keyring: k, Transport: t, Clock: c, Audit: a, Random: rand.Reader}, cache)
}

func newShipper(cfg config.Config, s ports.MetadataStore, cache *remotes.Cache, c ports.Clock, log *zap.Logger) *shipping.Shipper {
	return shipping.New(shipping.Deps{Store: s, Clients: cache, Clock: c, MaxHeldBytes: cfg.Remotes.MaxHeldBytes,
		Log: newSlog(log.With(zap.String("component", "remotes")))})
}
