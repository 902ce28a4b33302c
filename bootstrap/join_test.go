package bootstrap

import (
	"reflect"
	"strings"
	"testing"

	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

func threePeers() []config.Peer {
	return []config.Peer{{ID: "n1", Addr: "10.0.0.1:7943"}, {ID: "n2", Addr: "10.0.0.2:7943"}, {ID: "n3", Addr: "[fd00::3]:7943"}}
}

// ensure that cluster.initial_members picks the bootstrapping peers (every
// peer when empty), so a fresh node outside them starts join-only
// (api.md §6.4), and that naming an unknown peer is refused.
func TestInitialMembersFromConfig(t *testing.T) {
	all, err := initialMembers(config.Cluster{Peers: threePeers()})
	if err != nil || len(all) != 3 {
		t.Fatalf("empty list: %v, %v", all, err)
	}
	two, err := initialMembers(config.Cluster{Peers: threePeers(), InitialMembers: []string{"n1", "n2"}})
	if err != nil || !reflect.DeepEqual(two, map[string]string{"n1": "10.0.0.1:7943", "n2": "10.0.0.2:7943"}) {
		t.Fatalf("two of three: %v, %v", two, err)
	}
	if _, err := initialMembers(config.Cluster{Peers: threePeers(), InitialMembers: []string{"n9"}}); err == nil || !strings.Contains(err.Error(), "n9") {
		t.Fatalf("unknown id: %v", err)
	}
}

type staticFreshness struct{ ports.MetadataFreshness }

func (staticFreshness) CaughtUp() bool { return true }

type admission bool

func (a admission) Admitted() bool { return bool(a) }

// ensure that a joiner is not ready until admitted, whatever else holds,
// and says so (internals.md §9.6).
func TestReadinessWaitsForAdmission(t *testing.T) {
	r := newReadiness(staticFreshness{}, admission(false))
	r.markStarted()
	if err := r.Ready(); err == nil || !strings.Contains(err.Error(), "admit") {
		t.Fatalf("not admitted: %v", err)
	}
	r.admitted = admission(true)
	if err := r.Ready(); err != nil {
		t.Fatalf("admitted: %v", err)
	}
}
