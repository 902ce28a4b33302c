package membership

import (
	"context"
	"sync"
	"time"

	"github.com/narad/narad/ports"
)

// detailBudget bounds the whole detail=true round: every member is asked
// at once, and all answers come within it (api.md §2.17).
const detailBudget = 2 * time.Second

// statusNotWired is the status_error of every member when this node was
// built without a way to ask (tests).
const statusNotWired = "node status is not available on this node"

// StatusSources is how the roster reads members' own statuses: this node's
// directly, the others' over the node RPC (op 33).
type StatusSources struct {
	Self  string
	Local interface {
		NodeStatus(ctx context.Context) (ports.NodeStatus, error)
	}
	Peers ports.PeerStatus
}

// WithStatus returns r answering detail listings from src.
func (r *Roster) WithStatus(src StatusSources) *Roster {
	r.status = &src
	return r
}

// ListDetail is List with each member's own status, or why it could not
// be read, asked of every member at once within 2 s in all.
func (r *Roster) ListDetail(ctx context.Context) ([]MemberView, error) {
	views, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	if r.status == nil {
		for i := range views {
			views[i].StatusError = statusNotWired
		}
		return views, nil
	}
	ctx, cancel := context.WithTimeout(ctx, detailBudget)
	defer cancel()
	var wg sync.WaitGroup
	for i := range views {
		wg.Go(func() {
			st, err := r.askStatus(ctx, views[i].ID)
			if err != nil {
				views[i].StatusError = err.Error()
				return
			}
			views[i].NodeStatus = &st
		})
	}
	wg.Wait()
	for i := range views {
		views[i].DecommissionBlocked = append(views[i].DecommissionBlocked, detailBlockers(views[i])...)
	}
	return views, nil
}

func (r *Roster) askStatus(ctx context.Context, id string) (ports.NodeStatus, error) {
	if id == r.status.Self {
		return r.status.Local.NodeStatus(ctx)
	}
	return r.status.Peers.NodeStatus(ctx, id)
}

// Statuses asks the given members for their own status at once, within
// 2 s in all: each id maps to its status, or to why it could not be read.
func (r *Roster) Statuses(ctx context.Context, ids []string) (map[string]ports.NodeStatus, map[string]string) {
	got, failed := map[string]ports.NodeStatus{}, map[string]string{}
	if r.status == nil {
		for _, id := range ids {
			failed[id] = statusNotWired
		}
		return got, failed
	}
	ctx, cancel := context.WithTimeout(ctx, detailBudget)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			st, err := r.askStatus(ctx, id)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[id] = err.Error()
				return
			}
			got[id] = st
		})
	}
	wg.Wait()
	return got, failed
}
