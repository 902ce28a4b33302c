package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// TestRemoteShipsInOrder ships 50,000 keyed records (200 keys, each with
// its own sequence) from A's "orders" to B's through the remote child
// orders-b with 4 lanes from the earliest record (api.md §2.10.2): 10,000
// produced before the attach, 40,000 while it ships. Every record must
// reach B, and each key's records must sit in B's partition in the order
// A took them (a lane keeps a key's order, internals.md §7.2). Then a
// paused link ships nothing and a resumed one catches up (api.md §2.12.1).
func TestRemoteShipsInOrder(t *testing.T) {
	const early, late = 10_000, 40_000
	p := startRemotePair(t)
	l, kp := newShipLedger(), newKeyedProducer(200, 2)
	kp.produceAll(t, p.aClient, l, early)
	attached := time.Now()
	checkStub(t, p.attach(t, "earliest", 4), "earliest", 4)
	if err := p.aClient.Produce(t.Context(), remoteChild, []byte(`{}`), "", nil); httpclient.StatusOf(err) != 409 {
		t.Fatalf("produce to the stub: %v, want 409 (api.md §5.8)", err)
	}
	c := l.collect(t, p.bClients)
	took := kp.produceAll(t, p.aClient, l, late)
	produced := time.Since(attached)
	p.settle(t, l, c, 4*time.Minute)
	arrived := time.Since(attached)
	t.Logf("produced %d records at %.0f/s while shipping; all on B %s after the attach: %.0f records/s (tail %s after the last produce)",
		early+late, late/took.Seconds(), arrived.Round(time.Millisecond), (early+late)/arrived.Seconds(), (arrived - produced).Round(time.Millisecond))
	checkOrder(t, l)
	p.waitRunning(t, time.Minute)

	t.Run("paused link ships nothing", func(t *testing.T) {
		a := p.childRoute(t, p.a[1], "pause", `{"reason":"e2e pause"}`)
		skipWithoutRemoteChildren(t, "pause", a)
		a.want(t, "pause", 200, "")
		if !strings.Contains(a.body, `"paused":true`) || !strings.Contains(a.body, `"pause_reason":"e2e pause"`) {
			t.Fatalf("pause answer %s, want remote.paused and its reason", a.body)
		}
		p.waitChild(t, p.a[2], "every partition paused", 30*time.Second, func(r remoteChildRow) bool {
			if r.State != "paused" || !r.Paused || len(r.Partitions) != remoteParts {
				return false
			}
			for _, part := range r.Partitions {
				if part.State != "paused" {
					return false
				}
			}
			return true
		})
		held, batches := l.report().copies, p.proxies[0].batches.Load()
		kp.produceAll(t, p.aClient, l, 2_000)
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
			if now := l.report().copies; now != held {
				t.Fatalf("B got %d records from a paused link", now-held)
			}
			time.Sleep(100 * time.Millisecond) // watching B for a while, bounded
		}
		row := p.waitChild(t, p.a[0], "the paused link's lag", 30*time.Second, func(r remoteChildRow) bool {
			return r.LagComplete && r.LagMessages >= 2_000
		})
		t.Logf("paused: lag %d, %d batch requests reached B meanwhile (target checks included)", row.LagMessages, p.proxies[0].batches.Load()-batches)
		a = p.childRoute(t, p.a[0], "resume", `{}`)
		a.want(t, "resume", 200, "")
		if strings.Contains(a.body, `"paused":true`) {
			t.Fatalf("resume answer %s still paused", a.body)
		}
		p.settle(t, l, c, 2*time.Minute)
		p.waitRunning(t, time.Minute)
		checkOrder(t, l)
	})
}

// checkStub checks the attach answer is the stub of api.md §2.10.2.
func checkStub(t *testing.T, a answer, from string, lanes int) {
	t.Helper()
	var s struct {
		Partitions    int     `json:"partitions"`
		Role          string  `json:"role"`
		Parent        string  `json:"parent"`
		Owner         string  `json:"owner"`
		AttachOffsets []int64 `json:"attach_offsets"`
		Remote        struct {
			Name  string `json:"name"`
			Topic string `json:"topic"`
			From  string `json:"from"`
			Lanes int    `json:"lanes"`
		} `json:"remote"`
	}
	if err := json.Unmarshal([]byte(a.body), &s); err != nil || s.Partitions != 0 || s.Role != "child" || s.Parent != remoteTopic ||
		s.Owner != "" || len(s.AttachOffsets) != remoteParts || s.Remote.Name != remoteName || s.Remote.Topic != remoteTopic ||
		s.Remote.From != from || s.Remote.Lanes != lanes {
		t.Fatalf("attach answered %s (%v), want a stub under %s with remote %s/%s from %s, %d lanes", a.body, err, remoteTopic, remoteName, remoteTopic, from, lanes)
	}
	if from == "earliest" {
		for i, off := range s.AttachOffsets {
			if off != 0 {
				t.Fatalf("attach offset %d of partition %d, want 0 from earliest: %s", off, i, a.body)
			}
		}
	}
}

// TestRemoteLinkCutAndHealed cuts every proxy in front of B (dials are
// refused) while A takes 5,000 more records: A keeps answering 202, and
// the listing shows the link not running with a lag (api.md §2.11, §5.8
// link state unavailable). Once healed, every record reaches B.
func TestRemoteLinkCutAndHealed(t *testing.T) {
	p := startRemotePair(t)
	l, kp := newShipLedger(), newKeyedProducer(200, 3)
	p.attach(t, "attach", 4)
	c := l.collect(t, p.bClients)
	kp.produceAll(t, p.aClient, l, 5_000)
	p.settle(t, l, c, 2*time.Minute)

	for _, px := range p.proxies {
		px.cut()
	}
	cut := time.Now()
	kp.produceAll(t, p.aClient, l, 5_000)
	row := p.waitChild(t, p.a[1], "the cut shows in the listing", time.Minute, func(r remoteChildRow) bool {
		return r.State != "running" && r.State != "" && r.LagMessages > 0
	})
	t.Logf("%s after the cut the listing says state %s, lag %d", time.Since(cut).Round(time.Millisecond), row.State, row.LagMessages)
	for _, px := range p.proxies {
		px.heal()
	}
	healed := time.Now()
	p.settle(t, l, c, 2*time.Minute)
	t.Logf("every record on B %s after the heal", time.Since(healed).Round(time.Millisecond))
	p.waitRunning(t, time.Minute)
	checkOrder(t, l)
}
