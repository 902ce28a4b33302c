package metastore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/lni/dragonboat/v4"
	"github.com/lni/dragonboat/v4/config"
	"go.uber.org/zap"
)

// HostConfig configures one node's NodeHost.
type HostConfig struct {
	// NodeID is this node's id; its Raft replica id is meta.ReplicaID(NodeID).
	NodeID string
	// RaftAddr is the host:port Raft listens on and peers dial. The Raft
	// configuration keeps the address a replica first started with.
	RaftAddr string
	// DataDir holds the Raft log (raft/) and the state machines (fsm/).
	DataDir string
	// RTT is one Raft tick (heartbeat interval); election after 10 ticks.
	// 0 means 50 ms.
	RTT time.Duration
	// DeploymentID keeps clusters apart on a shared network (0 = default).
	DeploymentID uint64
	// Logger receives this package's and dragonboat's logs. Required.
	Logger *zap.Logger
	// TLSCertFile, TLSKeyFile and TLSCAFile (all three or none) run Raft
	// over mutual TLS (internals §12.3): this node's PEM certificate (DNS
	// SAN narad-cluster.local, serverAuth and clientAuth) and key, and the
	// PEM bundle of CAs a peer's certificate must chain to. Read once, here.
	// None: plaintext.
	TLSCertFile, TLSKeyFile, TLSCAFile string
}

// Host is one node's dragonboat NodeHost: the Raft transport, log store and
// engine every shard on this node shares. The metadata shard is shard 1;
// further shards can run on the same Host later.
type Host struct {
	cfg HostConfig
	nh  *dragonboat.NodeHost
	log *zap.Logger

	tenures *tenures   // leadership reports, per shard
	links   *raftLinks // transport connection reports, per peer

	mu     sync.Mutex
	stores []*Store
	closed bool
}

// NewHost starts a NodeHost. It rejects a config without node id, address,
// data dir or logger, and TLS files that are partly set, unreadable, or
// hold a certificate peers would refuse whatever their bundle (no cluster
// name, wrong usages) or a key that does not match it.
func NewHost(cfg HostConfig) (*Host, error) {
	switch {
	case cfg.Logger == nil:
		return nil, fmt.Errorf("new host: nil logger: %w", ErrBadConfig)
	case cfg.NodeID == "" || cfg.RaftAddr == "" || cfg.DataDir == "":
		return nil, fmt.Errorf("new host: node id, raft address and data dir are required: %w", ErrBadConfig)
	}
	if cfg.RTT <= 0 {
		cfg.RTT = defaultRTT
	}
	rtls, err := loadRaftTLS(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.With(zap.String("component", "metastore"), zap.String("node", cfg.NodeID))
	routeDragonboatLogs(cfg.Logger)
	ten := newTenures()
	nhc := nodeHostConfig(cfg)
	if rtls != nil {
		rtls.apply(&nhc, log)
	}
	nhc.RaftEventListener = ten
	links := newRaftLinks()
	nhc.SystemEventListener = links
	nh, err := dragonboat.NewNodeHost(nhc)
	if err != nil {
		return nil, fmt.Errorf("metastore: start node host %s at %s: %w", cfg.NodeID, cfg.RaftAddr, err)
	}
	logTransport(log, rtls, cfg.RaftAddr)
	return &Host{cfg: cfg, nh: nh, log: log, tenures: ten, links: links}, nil
}

func nodeHostConfig(cfg HostConfig) config.NodeHostConfig {
	logdb := config.GetTinyMemLogDBConfig()
	logdb.Shards = logDBShards
	logdb.KVWriteBufferSize = logDBWriteBufferBytes
	logdb.KVMaxWriteBufferNumber = logDBWriteBufferNumber
	return config.NodeHostConfig{
		NodeHostDir:    filepath.Join(cfg.DataDir, "raft"),
		RTTMillisecond: uint64(max(cfg.RTT.Milliseconds(), 1)),
		RaftAddress:    cfg.RaftAddr,
		DeploymentID:   cfg.DeploymentID,
		Expert: config.ExpertConfig{
			LogDB: logdb,
			Engine: config.EngineConfig{ExecShards: engineWorkers, CommitShards: engineWorkers,
				ApplyShards: engineWorkers, SnapshotShards: engineWorkers, CloseShards: engineWorkers},
		},
	}
}

// Close stops every shard and the NodeHost. Idempotent.
func (h *Host) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	stores := h.stores
	h.mu.Unlock()
	for _, s := range stores {
		s.stop()
	}
	h.nh.Close()
}

func (h *Host) register(s *Store) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errors.New("metastore: host closed")
	}
	h.stores = append(h.stores, s)
	return nil
}
