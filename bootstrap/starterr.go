package bootstrap

import (
	"errors"
	"fmt"
	"syscall"

	"go.uber.org/dig"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/bootstrap/config"
)

// startFailure turns a failed build or start of the node into one line an
// operator can act on: the cause without the dependency-injection chain
// around it, and for the common failures what to do about them.
func startFailure(err error, cfg config.Config) error {
	cause := dig.RootCause(err)
	switch {
	case errors.Is(cause, vfs.ErrDirLocked):
		return fmt.Errorf("%w; is another narad node running on it? Stop that node, or give this one its own directory (--data-dir or NARAD_DATA_DIR)",
			cause)
	case errors.Is(cause, syscall.EADDRINUSE):
		return fmt.Errorf("%w: another process listens there. The HTTP address (%s) takes its port on TCP for the API and on UDP for the node RPC; "+
			"Raft listens on the cluster address (%s; by default the port after the API's). "+
			"Choose free ports with --port and --cluster-port, or NARAD_HTTP_ADDR and NARAD_CLUSTER_ADDR",
			cause, cfg.HTTP.Addr, cfg.Cluster.Addr)
	}
	return fmt.Errorf("start node: %w", cause)
}
