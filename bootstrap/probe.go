package bootstrap

import (
	"context"

	"go.uber.org/zap"

	"github.com/narad/narad/adapters/metastore"
	"github.com/narad/narad/adapters/quicpeer"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/bootstrap/config"
)

// joinInsteadOfBootstrap runs before the metadata shard starts (internals
// §9.2): an initial member with no Raft state (an empty volume, or one
// whose Raft directory was lost) asks its peers whether a cluster exists,
// and starts join-only when one answers for a configured cluster instead
// of seeding a rival configuration; on a brand-new install nobody answers
// and it bootstraps. A node with Raft state restarts from it and never
// probes; a node without peers has nobody to ask.
//
// A fresh node outside the initial members starts join-only whatever the
// answer, as a non-voter (the log it replays stages it before it promotes
// it); it sends the same join first, before its replica starts. For a
// voter whose volume was wiped the leader answers after handing its
// leadership over (membership.Admitter), so no heartbeat of the old leader
// carries a commit index the empty log cannot reach; a new node is staged
// by that join, as its join loop would have done. When nobody answers, its
// join loop keeps asking.
//
// The probe needs the node-RPC client, not its server: this node's own
// server starts after the metastore, so while peers probe each other on a
// brand-new install nobody answers, which is the answer that bootstraps.
//
// It returns the probe's verdict: Found means join-only, AsVoter says in
// which role the replica starts (see membership.ProbeResult).
func joinInsteadOfBootstrap(cfg config.Config, id NodeIdentity, h *metastore.Host, members map[string]string,
	c *quicpeer.Client, log *zap.Logger) (membership.ProbeResult, error) {
	if len(cfg.Cluster.Peers) == 0 || h.HasMetadataState() {
		return membership.ProbeResult{}, nil
	}
	peers, err := peerRPCAddrs(cfg, id)
	if err != nil {
		return membership.ProbeResult{}, err
	}
	log = log.With(zap.String("component", "join"))
	_, initial := members[id.ID]
	if initial {
		log.Info("initial member with an empty volume: probing the peers for a configured cluster", zap.Strings("peers", peers))
	}
	r := membership.ProbeForCluster(context.Background(), membership.ProbeConfig{
		Sender: quicpeer.NewJoinClient(c), Request: joinRequest(id, true), Peers: peers, Log: newSlog(log),
	})
	switch {
	case !initial:
		log.Info("fresh join-only node: asked the cluster before starting its replica",
			zap.String("peer", r.Peer), zap.String("answer", r.Answer))
		return membership.ProbeResult{Found: true, Peer: r.Peer, Answer: r.Answer}, nil
	case r.Found:
		log.Warn("peers answered for a configured cluster: starting join-only", zap.String("peer", r.Peer),
			zap.String("answer", r.Answer), zap.Bool("as_voter", r.AsVoter))
	default:
		log.Info("no peer answered for a configured cluster: bootstrapping")
	}
	return r, nil
}
