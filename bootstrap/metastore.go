package bootstrap

import (
	"context"
	"fmt"
	"net"
	"path/filepath"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/metastore"
	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// metastoreModule starts this node's Raft host and the metadata shard.
var metastoreModule = fx.Module("metastore",
	fx.Provide(
		newMetaHost,
		newMetaStore,
		fx.Annotate(func(s *metastore.Store) ports.MetadataStore { return s }),
	),
)

func newMetaHost(lc fx.Lifecycle, cfg config.Config, id NodeIdentity, log *zap.Logger) (*metastore.Host, error) {
	h, err := metastore.NewHost(metastore.HostConfig{
		NodeID:   cfg.Cluster.NodeID,
		RaftAddr: id.RaftAddr,
		DataDir:  filepath.Join(cfg.Storage.DataDir, "metastore"),
		Logger:   log,
		// Raft over mutual TLS when all three are set (internals §12.3).
		TLSCertFile: cfg.Security.ClusterTLSCertFile,
		TLSKeyFile:  cfg.Security.ClusterTLSKeyFile,
		TLSCAFile:   cfg.Security.ClusterTLSCAFile,
	})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(h.Close))
	return h, nil
}

func newMetaStore(lc fx.Lifecycle, cfg config.Config, id NodeIdentity, h *metastore.Host, c *quicpeer.Client,
	log *zap.Logger) (*metastore.Store, error) {
	members, err := initialMembers(cfg.Cluster)
	if err != nil {
		return nil, err
	}
	probe, err := joinInsteadOfBootstrap(cfg, id, h, members, c, log)
	if err != nil {
		return nil, err
	}
	s, err := h.OpenMetadata(metastore.StoreConfig{
		InitialMembers:  members,
		Join:            probe.Found,
		JoinAsVoter:     probe.AsVoter,
		SnapshotEntries: uint64(cfg.Cluster.RaftSnapshotThreshold),
	})
	if err != nil {
		return nil, fmt.Errorf("open metadata store: %w", err)
	}
	lc.Append(fx.StopHook(func(context.Context) error { return nil }))
	return s, nil
}

// initialMembers are the peers that bootstrap the cluster together
// (api.md §6.4): those cluster.initial_members names, or every peer when
// the list is empty. A fresh node outside them starts join-only.
func initialMembers(c config.Cluster) (map[string]string, error) {
	peers := make(map[string]string, len(c.Peers))
	for _, p := range c.Peers {
		peers[p.ID] = p.Addr
	}
	if len(c.InitialMembers) == 0 {
		return peers, nil
	}
	members := make(map[string]string, len(c.InitialMembers))
	for _, id := range c.InitialMembers {
		addr, ok := peers[id]
		if !ok {
			return nil, fmt.Errorf("cluster.initial_members names %q, which is not in cluster.peers", id)
		}
		members[id] = addr
	}
	return members, nil
}

// NodeIdentity is how this node names itself to clients and peers.
type NodeIdentity struct {
	ID       string
	HTTPAddr string // advertised client address (host:port)
	RaftAddr string // advertised Raft address (host:port)
}

// identify derives the advertised addresses (api.md §6.4): the host of the
// node's own peer entry when an address has none, else loopback.
func identify(cfg config.Config) (NodeIdentity, error) {
	host := "127.0.0.1"
	for _, p := range cfg.Cluster.Peers {
		if p.ID == cfg.Cluster.NodeID {
			if h, _, err := net.SplitHostPort(p.Addr); err == nil && h != "" {
				host = h
			}
		}
	}
	raft := cfg.Cluster.AdvertiseAddr
	if raft == "" {
		raft = cfg.Cluster.Addr
	}
	raftAddr, err := withHost(raft, host)
	if err != nil {
		return NodeIdentity{}, fmt.Errorf("cluster.addr %q: %w", raft, err)
	}
	httpAddr, err := withHost(cfg.HTTP.Addr, host)
	if err != nil {
		return NodeIdentity{}, fmt.Errorf("http.addr %q: %w", cfg.HTTP.Addr, err)
	}
	return NodeIdentity{ID: cfg.Cluster.NodeID, HTTPAddr: httpAddr, RaftAddr: raftAddr}, nil
}

// withHost fills an address without a routable host with host.
func withHost(addr, host string) (string, error) {
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if h == "" || h == "0.0.0.0" || h == "::" {
		h = host
	}
	return net.JoinHostPort(h, port), nil
}
