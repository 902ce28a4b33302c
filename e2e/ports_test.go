package e2e

import (
	"testing"

	"github.com/narad/narad/adapters/loopbackport"
)

// freePorts returns a port p below the kernel's ephemeral range (where a
// killed node's ports stay unbound until it restarts) such that p and p+1
// are free on TCP (HTTP and Raft) and p on UDP (node RPC), and that no
// other test of this process was given.
func freePorts(t *testing.T) int { return loopbackport.Pick(t, 2) }
