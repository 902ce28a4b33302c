package remotes_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// A deleted remote whose credential entry this node's cache still holds
// is lingering on this node, with or without asking the members, until
// the cache drops it (api.md §2.18).
func TestListingNamesARemoteThisNodeStillHolds(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.create(t, "eu")
	if _, err := f.svc.List(context.Background(), admin, true); err != nil { // builds both cache entries
		t.Fatal(err)
	}
	if err := f.svc.Delete(context.Background(), admin, "dr", false); err != nil {
		t.Fatal(err)
	}
	want := []remotes.Lingering{{Name: "dr", Nodes: []string{"n1"}}}
	for _, nodes := range []bool{true, false} {
		l, err := f.svc.List(context.Background(), admin, nodes)
		if err != nil || !reflect.DeepEqual(l.Lingering, want) || len(l.Remotes) != 1 {
			t.Fatalf("nodes=%v: %v lingering %+v", nodes, err, l.Lingering)
		}
	}
	all, _ := f.meta.Remotes()
	f.cache.Sync(all)
	if l, _ := f.svc.List(context.Background(), admin, true); len(l.Lingering) != 0 {
		t.Fatalf("after the cache dropped it: %+v", l.Lingering)
	}
}

// Another member that still reports a remote this node's metadata no
// longer has (its cache holds it, or its replica has not applied the
// delete) makes it lingering there; a member that does not answer is
// named under not_answering even when no remote is left.
func TestListingNamesARemoteAMemberStillHolds(t *testing.T) {
	peers := &peersFake{creds: []ports.RemoteCredentialReport{
		{Remote: "dr", State: "ready", CredentialVersion: 1},
		{Remote: "old", State: "ready", CredentialVersion: 3},
	}}
	f, svc := membersFixture(t, peers)
	l, err := svc.List(context.Background(), admin, true)
	if err != nil || !reflect.DeepEqual(l.Lingering, []remotes.Lingering{{Name: "old", Nodes: []string{"n2"}}}) || len(l.NotAnswering) != 0 {
		t.Fatalf("%v lingering %+v not answering %v", err, l.Lingering, l.NotAnswering)
	}
	if l, _ := svc.List(context.Background(), admin, false); len(l.Lingering) != 0 {
		t.Fatalf("nodes=false asked the members: %+v", l.Lingering)
	}
	if err := svc.Delete(context.Background(), admin, "dr", false); err != nil {
		t.Fatal(err)
	}
	f.cache.Sync(nil)
	l, _ = svc.List(context.Background(), admin, true)
	if !reflect.DeepEqual(l.Lingering, []remotes.Lingering{{Name: "dr", Nodes: []string{"n2"}}, {Name: "old", Nodes: []string{"n2"}}}) {
		t.Fatalf("after the delete: %+v", l.Lingering)
	}
	peers.err = errors.New("no answer")
	l, _ = svc.List(context.Background(), admin, true)
	if len(l.Lingering) != 0 || !reflect.DeepEqual(l.NotAnswering, []string{"n2"}) {
		t.Fatalf("silent member: lingering %+v not answering %v", l.Lingering, l.NotAnswering)
	}
}

// Held reports the cache's entries of remotes no longer in the metadata,
// and of an incarnation since replaced under the same name.
func TestCacheHeldEntries(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	dr := f.remote(t, "dr")
	f.cache.Client(dr)
	if got := f.cache.Held([]meta.Remote{dr}); len(got) != 0 {
		t.Fatalf("held a current remote: %+v", got)
	}
	got := f.cache.Held(nil)
	if len(got) != 1 || got[0].Remote != "dr" || got[0].State != remotes.StateReady || got[0].CredentialVersion != dr.CredentialVersion ||
		got[0].Fingerprint != dr.Fingerprint {
		t.Fatalf("held after a delete %+v", got)
	}
	again := dr
	again.ID = "ffffffffffffffff"
	if got := f.cache.Held([]meta.Remote{again}); len(got) != 1 || got[0].Remote != "dr" {
		t.Fatalf("held after a re-create %+v", got)
	}
}
