package quicpeer

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// fakeAnswerer answers every join with a canned admission or error and
// records the requests.
type fakeAnswerer struct {
	mu  sync.Mutex
	got []ports.JoinRequest
	a   ports.JoinAdmission
	err error
}

func (f *fakeAnswerer) AnswerJoin(_ context.Context, req ports.JoinRequest) (ports.JoinAdmission, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, req)
	return f.a, f.err
}

// ensure that a join crosses two real nodes: the request arrives intact
// and the answer comes back as the joiner reads it (internals.md §9.3).
func TestJoinOverQUIC(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ServerOptions{})
	ans := &fakeAnswerer{a: ports.JoinAdmission{Status: ports.JoinStaged}}
	RegisterJoin(srv, ans)
	c, _ := newClient(t, secretA)
	j := NewJoinClient(c)
	addr := srv.Addr().String()

	got, err := j.Join(context.Background(), addr, sampleJoin())
	if err != nil || got.Status != ports.JoinStaged {
		t.Fatalf("Join = %+v, %v", got, err)
	}
	ans.mu.Lock()
	if len(ans.got) != 1 || ans.got[0] != sampleJoin() {
		t.Fatalf("answerer saw %+v", ans.got)
	}
	ans.err = &domain.NotLeaderError{LeaderID: "n2", LeaderAddr: "127.0.0.2:7942"}
	ans.mu.Unlock()
	_, err = j.Join(context.Background(), addr, sampleJoin())
	var nl *domain.NotLeaderError
	if !errors.As(err, &nl) || nl.LeaderAddr != "127.0.0.2:7942" || nl.LeaderID != "n2" {
		t.Fatalf("421 over the wire: %v", err)
	}
}

// ensure that a bad request is refused with 400 before the answerer sees
// it, and that a nil answerer is refused at wiring time.
func TestJoinServerRefusesBadPayloadAndNilAnswerer(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ServerOptions{})
	ans := &fakeAnswerer{}
	RegisterJoin(srv, ans)
	c, _ := newClient(t, secretA)
	raw, err := c.Call(context.Background(), srv.Addr().String(), OpJoinCluster, []byte{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	rp, err := decodeReply(raw)
	if err != nil || rp.status != statusBadRequest || rp.code != codeBadPayload || len(ans.got) != 0 {
		t.Fatalf("bad payload: %+v, %v, answerer saw %d", rp, err, len(ans.got))
	}
	defer func() {
		if recover() == nil {
			t.Fatal("nil answerer accepted")
		}
	}()
	RegisterJoin(srv, nil)
}

// ensure that a join to a node holding another cluster secret reads as
// domain.ErrClusterAuth (someone answers, unreadably), not as an
// unreachable peer: the empty-volume probe counts it (internals §9.2).
func TestJoinWithWrongSecretIsClusterAuth(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ServerOptions{})
	RegisterJoin(srv, &fakeAnswerer{a: ports.JoinAdmission{Status: ports.JoinVoter}})
	c, _ := newClient(t, secretB)
	_, err := NewJoinClient(c).Join(context.Background(), srv.Addr().String(), sampleJoin())
	if !errors.Is(err, domain.ErrClusterAuth) || !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong secret: %v, want ErrClusterAuth wrapping ErrAuth", err)
	}
}
