package bootstrap

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/adapters/passwords"
	"github.com/narad/narad/adapters/telemetry"
	"github.com/narad/narad/application/authn"
	"github.com/narad/narad/application/users"
	"github.com/narad/narad/bootstrap/config"
	"github.com/narad/narad/ports"
)

// adminPasswordFile is where a seeding node writes a generated root
// password (api.md §4.2), mode 0600, in its data directory.
const adminPasswordFile = "admin-password"

// securityModule authenticates clients and manages accounts: the audit
// log, the password hasher, the authenticator (with its cache and
// throttle), the users use case and its routes, and, with security on, the
// root seeding (api.md §4, internals.md §12).
var securityModule = fx.Module("security",
	fx.Provide(
		func(log *zap.Logger) ports.AuditLog { return telemetry.NewAudit(log) },
		func() ports.PasswordHasher { return passwords.New() },
		newAuthenticator,
		newUserService,
		newHTTPSecurity,
		asRoutes(httpapi.UserRoutes),
		asRoutes(httpapi.RemoteRoutes),
	),
	fx.Invoke(runRootSeeding, registerAuthGauges),
)

func newAuthenticator(lc fx.Lifecycle, s ports.MetadataStore, h ports.PasswordHasher, c ports.Clock, a ports.AuditLog) (*authn.Authenticator, error) {
	auth, err := authn.New(s, s, h, c, a)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error { return auth.Start() },
		OnStop:  func(context.Context) error { auth.Close(); return nil },
	})
	return auth, nil
}

func newUserService(s ports.MetadataStore, h ports.PasswordHasher, auth *authn.Authenticator, c ports.Clock, a ports.AuditLog) (*users.Service, error) {
	return users.New(s, h, auth, c, a)
}

func newHTTPSecurity(cfg config.Config, auth *authn.Authenticator, a ports.AuditLog) httpapi.Security {
	return httpapi.Security{Enabled: cfg.Security.Enabled, Auth: auth, MetricsUnauthenticated: cfg.HTTP.MetricsUnauthenticated, Audit: a}
}

func registerAuthGauges(m *telemetry.Metrics, auth *authn.Authenticator) {
	m.GaugeFunc("narad_auth_verify_queued", "Password checks admitted and not finished.", func() float64 {
		return float64(auth.VerifyQueued())
	})
}

// runRootSeeding seeds the root account once per cluster when this node
// leads and the cluster has no users, and warns when NARAD_ADMIN_PASSWORD
// is set but is not root's password (api.md §4.2). With security off
// nothing is seeded.
func runRootSeeding(lc fx.Lifecycle, cfg config.Config, s ports.MetadataStore, h ports.PasswordHasher, c ports.Clock,
	a ports.AuditLog, id NodeIdentity, log *zap.Logger) error {
	if !cfg.Security.Enabled {
		return nil
	}
	path := filepath.Join(cfg.Storage.DataDir, adminPasswordFile)
	seeder, err := users.NewSeeder(s, h, c, a, users.SeedSource{
		Password: cfg.Secrets.AdminPassword, Random: rand.Reader, NodeID: id.ID,
		Store: func(pw string) error {
			if err := writeSecretFile(path, pw); err != nil {
				return err
			}
			log.Info("generated a password for the root account admin (NARAD_ADMIN_PASSWORD is unset); it is in this file, readable by this user only",
				zap.String("file", path))
			return nil
		},
		Remove: func() error { return os.Remove(path) },
		Failed: func(err error) { log.Warn("seeding the root account failed; retrying", zap.Error(err)) },
	})
	if err != nil {
		return err
	}
	runWorker(lc, func(ctx context.Context) {
		seeder.Run(ctx)
		warnIfNotRootPassword(ctx, seeder, cfg, log)
	})
	return nil
}

func warnIfNotRootPassword(ctx context.Context, seeder *users.Seeder, cfg config.Config, log *zap.Logger) {
	if cfg.Secrets.AdminPassword == "" || ctx.Err() != nil {
		return
	}
	ok, err := seeder.CheckConfigured(ctx)
	switch {
	case err != nil:
		log.Warn("could not check NARAD_ADMIN_PASSWORD against the root account", zap.Error(err))
	case !ok:
		log.Warn("NARAD_ADMIN_PASSWORD is not the root account's password: the cluster already has users, so it changed nothing (change root's password with narad user passwd admin)")
	}
}

// writeSecretFile writes s to path, mode 0600, durably: a temp file synced
// and renamed over path, then the directory synced.
func writeSecretFile(path, s string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, adminPasswordFile+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) //nolint:errcheck // gone after the rename
	_, err = f.WriteString(s + "\n")
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
