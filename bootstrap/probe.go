package bootstrap

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"

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
// It asks each peer at the node-RPC addresses probeAddrs derives from the
// configuration, not at this node's own client port alone.
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
	peers, err := probeAddrs(cfg, id)
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

// probeAddrs are the node-RPC addresses the empty-volume probe asks: for
// each configured peer but this node, in the configured order,
//
//  1. its Raft host with the shared client port, this node's own http.addr
//     port: the rule of internals.md §9.1, right wherever every node uses
//     the same port pair (a real deployment: one host per node, 7942/7943);
//  2. its Raft host with its own Raft port shifted by this node's own
//     distance from its Raft port to its client port: right wherever every
//     node keeps the same distance between its two ports, which holds for
//     the defaults (7942 and 7943) and for `narad server start --dev
//     --port p` (Raft on p+1, api.md §8.2), and is the only way a loopback
//     cluster with a port pair per node can be described at all;
//
// each address once, and never this node's own: on one host the first rule
// names this node itself for every peer, whose server starts after the
// probe, so a probe that asked only there found nobody and bootstrapped a
// rival configuration beside the real cluster (issue 15).
//
// Why these and not the member table's addresses, the one record of every
// node's client address: the table lives in the metadata shard, which the
// probe runs before and which an empty volume does not hold, and the Raft
// transport carries no other requests. A peer that answers 421 names the
// leader at its member-table address, and the probe follows that (see
// membership.ProbeForCluster). Where the rules are both wrong for a peer,
// the probe fails only towards "nobody answered", as before. An address
// no node serves on costs at most one unanswered 2 s call per round, asked
// at the same time as the others.
func probeAddrs(cfg config.Config, id NodeIdentity) ([]string, error) {
	_, httpPort, err := splitPort(id.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("http address %q: %w", id.HTTPAddr, err)
	}
	_, raftPort, err := splitPort(id.RaftAddr)
	if err != nil {
		return nil, fmt.Errorf("raft address %q: %w", id.RaftAddr, err)
	}
	type peer struct {
		host string
		raft int
	}
	peers := make([]peer, 0, len(cfg.Cluster.Peers))
	self := []string{id.HTTPAddr} // and its client port at its own entry's host
	for _, p := range cfg.Cluster.Peers {
		host, port, err := splitPort(p.Addr)
		if err != nil {
			return nil, fmt.Errorf("cluster.peers entry %s@%s: %w", p.ID, p.Addr, err)
		}
		if p.ID == id.ID {
			self = append(self, net.JoinHostPort(host, strconv.Itoa(httpPort)))
			continue
		}
		peers = append(peers, peer{host: host, raft: port})
	}
	out := make([]string, 0, 2*len(peers))
	add := func(host string, port int) {
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		if port > 0 && port <= 65535 && !slices.Contains(self, addr) && !slices.Contains(out, addr) {
			out = append(out, addr)
		}
	}
	for _, p := range peers {
		add(p.host, httpPort)
		add(p.host, p.raft+httpPort-raftPort)
	}
	return out, nil
}

// splitPort splits host:port, the port a number.
func splitPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", port, err)
	}
	return host, n, nil
}
