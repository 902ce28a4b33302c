package bootstrap

import (
	"errors"
	"sync/atomic"

	"github.com/narad/narad/ports"
)

// Readiness answers /healthz and /readyz (api.md §2.1-2.2, internals.md
// §9.6): ready once the start-up work finished (for a joining node, its
// admission first) and while the metadata replica is caught up with a
// leader it heard from within 5 s.
type Readiness struct {
	fresh    ports.MetadataFreshness
	admitted Admission
	started  atomic.Bool
	stopping atomic.Bool
}

func newReadiness(fresh ports.MetadataFreshness, admitted Admission) *Readiness {
	return &Readiness{fresh: fresh, admitted: admitted}
}

// ShuttingDown reports whether graceful shutdown has begun.
func (r *Readiness) ShuttingDown() bool { return r.stopping.Load() }

// Ready is nil when the node may take traffic, else the reason it may not.
func (r *Readiness) Ready() error {
	switch {
	case r.stopping.Load():
		return errors.New("shutting down")
	case !r.admitted.Admitted():
		return errors.New("joining: waiting for the cluster's leader to admit this node")
	case !r.started.Load():
		return errors.New("starting: metadata catch-up and start-up work not finished")
	case !r.fresh.CaughtUp():
		return errors.New("metadata not caught up with a Raft leader heard from in the last 5s")
	}
	return nil
}

func (r *Readiness) markStarted() { r.started.Store(true) }
func (r *Readiness) shutdown()    { r.stopping.Store(true) }
