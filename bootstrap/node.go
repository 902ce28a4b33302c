package bootstrap

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Boot constants (internals.md §8.8, §9.6).
const (
	startupCatchUpWaitMax = 60 * time.Second
	catchUpPollInterval   = 50 * time.Millisecond
	fxStopTimeout         = 30 * time.Second
)

// Params is what the command line hands the node.
type Params struct {
	Config config.Config
	Log    *zap.Logger
	Start  time.Time
}

// NewNode builds a node's fx application in boot order: telemetry, storage
// (WAL replay, partition logs), metastore, use cases and their workers,
// then HTTP; start-up work (catch-up, member registration) runs after the
// listener opens, and /readyz turns 200 when it is done.
//
// The node holds its data directory's lock from here until it stops, so a
// second node pointed at the same directory fails at once with
// vfs.ErrDirLocked instead of writing beside the first.
func NewNode(p Params) (*fx.App, error) {
	lock, err := vfs.LockDir(p.Config.Storage.DataDir)
	if err != nil {
		return nil, err
	}
	app := fx.New(
		fx.Invoke(func(lc fx.Lifecycle) { lc.Append(fx.StopHook(lock.Release)) }),
		nodeOptions(p), fx.StopTimeout(fxStopTimeout))
	if err := app.Err(); err != nil {
		lock.Release()
		return nil, err
	}
	return app, nil
}

func nodeOptions(p Params) fx.Option {
	return fx.Options(
		fx.Supply(p.Config, p.Log, BootTime(p.Start)),
		fx.WithLogger(func(l *zap.Logger) fxevent.Logger {
			return startErrorsUnlogged{&fxevent.ZapLogger{Logger: l.Named("fx").WithOptions(zap.IncreaseLevel(zap.WarnLevel))}}
		}),
		fx.Provide(
			identify,
			telemetry.NewMetrics,
			fx.Annotate(func(m *telemetry.Metrics) ports.Metrics { return m }),
			fx.Annotate(newReadiness),
			fx.Annotate(func(s ports.MetadataStore) ports.MetadataFreshness { return s }),
			func() ports.Clock { return systemClock{} },
		),
		storageModule,
		metastoreModule,
		useCaseModule,
		securityModule,
		httpModule,
		fx.Invoke(startup, registerNodeGauges, registerRaftGauges),
	)
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// startup waits for the metadata replica to catch up, registers this node
// as a member, then marks the node ready. It runs beside the listener so
// /healthz answers at once.
func startup(lc fx.Lifecycle, store ports.MetadataStore, adm Admission, id NodeIdentity, r *Readiness, log *zap.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := boot(ctx, store, adm, id, log); err != nil {
					log.Error("start-up did not finish; the node stays unready", zap.Error(err))
					return
				}
				r.markStarted()
				log.Info("node ready", zap.String("node", id.ID), zap.String("http", id.HTTPAddr))
			}()
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			return nil
		},
	})
}

// boot waits for admission (a join-only node, unbounded: the join loop
// keeps asking), then for catch-up (60 s at most), then registers.
func boot(ctx context.Context, store ports.MetadataStore, adm Admission, id NodeIdentity, log *zap.Logger) error {
	if err := waitAdmitted(ctx, adm, log); err != nil {
		return err
	}
	if err := waitCaughtUp(ctx, store); err != nil {
		return err
	}
	return registerMember(ctx, store, id, log)
}

func waitAdmitted(ctx context.Context, adm Admission, log *zap.Logger) error {
	if adm.Admitted() {
		return nil
	}
	log.Info("waiting to be admitted to the cluster")
	if err := pollUntil(ctx, catchUpPollInterval, adm.Admitted); err != nil {
		return fmt.Errorf("not admitted to the cluster: %w", err)
	}
	log.Info("admitted to the cluster")
	return nil
}

func waitCaughtUp(ctx context.Context, f ports.MetadataFreshness) error {
	ctx, cancel := context.WithTimeout(ctx, startupCatchUpWaitMax)
	defer cancel()
	if err := pollUntil(ctx, catchUpPollInterval, f.CaughtUp); err != nil {
		return fmt.Errorf("metadata replica not caught up within %s: %w", startupCatchUpWaitMax, err)
	}
	return nil
}

// pollUntil checks cond at once and then every interval until it holds
// (nil) or ctx ends (ctx's error).
func pollUntil(ctx context.Context, every time.Duration, cond func() bool) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// registerMember records this node's addresses in the member table unless
// they are already there.
func registerMember(ctx context.Context, store ports.MetadataStore, id NodeIdentity, log *zap.Logger) error {
	members, err := store.Members()
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.ID == id.ID && m.Addr == id.HTTPAddr && m.ClusterAddr == id.RaftAddr && m.Status == meta.StatusAlive {
			return nil
		}
	}
	env := meta.Envelope{Actor: "node:" + id.ID, AtMs: time.Now().UnixMilli(), Event: &meta.MemberJoin{
		ID: id.ID, Addr: id.HTTPAddr, ClusterAddr: id.RaftAddr, Build: Build().Version, EntryTypes: meta.AppliesThroughType,
	}}
	res, err := store.Propose(ctx, env)
	if err != nil {
		return fmt.Errorf("register member %s: %w", id.ID, err)
	}
	log.Info("member registered", zap.String("node", id.ID), zap.Uint64("index", res.Index))
	return nil
}

// startErrorsUnlogged drops fx's own reports of a failed build or start (the
// constructor or hook that failed, the rollback, the failed start: several
// lines of one cause):
// the caller of Start reports the error once, in its own words.
type startErrorsUnlogged struct{ fxevent.Logger }

func (l startErrorsUnlogged) LogEvent(e fxevent.Event) {
	if startError(e) != nil {
		return
	}
	l.Logger.LogEvent(e)
}

// startError is the error an fx event reports about building or starting
// the app, nil for every other event.
func startError(e fxevent.Event) error {
	switch ev := e.(type) {
	case *fxevent.Provided:
		return ev.Err
	case *fxevent.Invoked:
		return ev.Err
	case *fxevent.Run:
		return ev.Err
	case *fxevent.OnStartExecuted:
		return ev.Err
	case *fxevent.RollingBack:
		return ev.StartErr
	case *fxevent.Started:
		return ev.Err
	}
	return nil
}
