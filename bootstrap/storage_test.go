package bootstrap

import (
	"path/filepath"
	"testing"

	"github.com/narad/narad/bootstrap/config"
)

// ensure that the WAL is opened on <data>/ingress/produce with segment
// preparation exactly when storage.ingress_wal_prealloc is set.
func TestWALOptionsFollowConfig(t *testing.T) {
	cfg := config.Default()
	cfg.Storage.DataDir = "/srv/narad"
	if o := walOptions(cfg); o.Prealloc || o.Dir != filepath.Join("/srv/narad", "ingress", "produce") {
		t.Fatalf("default options %+v", o)
	}
	cfg.Storage.IngressWALPrealloc = true
	if o := walOptions(cfg); !o.Prealloc {
		t.Fatal("storage.ingress_wal_prealloc=true did not turn on Prealloc")
	}
}
