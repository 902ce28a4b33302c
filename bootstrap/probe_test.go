package bootstrap

import (
	"reflect"
	"strings"
	"testing"

	"github.com/narad/narad/bootstrap/config"
)

// ensure that the empty-volume probe asks each peer at the node-RPC
// address it serves on, never at this node's own (issue 15): one host per
// node sharing a port pair gives each peer's Raft host with the shared
// client port (internals.md §9.1), once; one host with a port pair per
// node (HTTP on p, Raft on p+1, as the e2e clusters and `server start
// --dev` run) gives each peer's Raft port minus one, where the shared-port
// rule would name this node itself; other layouts get both candidates.
func TestProbeAddrsAskEachPeerWhereItServes(t *testing.T) {
	loopback := []config.Peer{{ID: "n1", Addr: "127.0.0.1:41001"}, {ID: "n2", Addr: "127.0.0.1:42001"}, {ID: "n3", Addr: "127.0.0.1:43001"}}
	cases := []struct {
		name  string
		peers []config.Peer
		id    NodeIdentity
		want  []string
	}{
		{
			name:  "shared_port_pair_one_host_each",
			peers: threePeers(),
			id:    NodeIdentity{ID: "n1", HTTPAddr: "10.0.0.1:7942", RaftAddr: "10.0.0.1:7943"},
			want:  []string{"10.0.0.2:7942", "[fd00::3]:7942"},
		},
		{
			name:  "loopback_port_pair_per_node",
			peers: loopback,
			id:    NodeIdentity{ID: "n2", HTTPAddr: "127.0.0.1:42000", RaftAddr: "127.0.0.1:42001"},
			want:  []string{"127.0.0.1:41000", "127.0.0.1:43000"},
		},
		{
			name:  "loopback_port_pair_per_node_first_node",
			peers: loopback,
			id:    NodeIdentity{ID: "n1", HTTPAddr: "127.0.0.1:41000", RaftAddr: "127.0.0.1:41001"},
			want:  []string{"127.0.0.1:42000", "127.0.0.1:43000"},
		},
		{
			name: "client_port_above_raft_port",
			peers: []config.Peer{{ID: "a", Addr: "h1:9000"}, {ID: "b", Addr: "h2:9000"},
				{ID: "c", Addr: "h3:9100"}},
			id:   NodeIdentity{ID: "a", HTTPAddr: "h1:9500", RaftAddr: "h1:9000"},
			want: []string{"h2:9500", "h3:9500", "h3:9600"},
		},
		{
			name:  "own_entry_host_differs_from_advertised_client_host",
			peers: []config.Peer{{ID: "n1", Addr: "localhost:41001"}, {ID: "n2", Addr: "localhost:42001"}, {ID: "n3", Addr: "localhost:43001"}},
			id:    NodeIdentity{ID: "n3", HTTPAddr: "127.0.0.1:43000", RaftAddr: "127.0.0.1:43001"},
			want:  []string{"localhost:41000", "localhost:42000"},
		},
		{
			name:  "derived_port_out_of_range_dropped",
			peers: []config.Peer{{ID: "n1", Addr: "h1:1"}, {ID: "n2", Addr: "h2:65535"}, {ID: "n3", Addr: "h3:7943"}},
			id:    NodeIdentity{ID: "n3", HTTPAddr: "h3:7942", RaftAddr: "h3:7943"},
			want:  []string{"h1:7942", "h2:7942", "h2:65534"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Config{Cluster: config.Cluster{Peers: tc.peers}}
			got, err := probeAddrs(cfg, tc.id)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("probeAddrs = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// ensure that an address without a numeric port is refused with the entry
// it came from, rather than probed.
func TestProbeAddrsRefuseUnreadableAddresses(t *testing.T) {
	cfg := config.Config{Cluster: config.Cluster{Peers: []config.Peer{{ID: "n1", Addr: "h1:7943"}, {ID: "n2", Addr: "h2"}}}}
	ok := NodeIdentity{ID: "n1", HTTPAddr: "h1:7942", RaftAddr: "h1:7943"}
	for _, tc := range []struct {
		id   NodeIdentity
		want string
	}{
		{id: ok, want: "n2@h2"},
		{id: NodeIdentity{ID: "n1", HTTPAddr: "h1:http", RaftAddr: "h1:7943"}, want: "http address"},
		{id: NodeIdentity{ID: "n1", HTTPAddr: "h1:7942", RaftAddr: "h1"}, want: "raft address"},
	} {
		if _, err := probeAddrs(cfg, tc.id); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("probeAddrs(%+v) = %v, want an error naming %q", tc.id, err, tc.want)
		}
	}
}
