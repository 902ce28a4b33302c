package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// A node's ports come from below the kernel's ephemeral range: a port in
// that range that a killed node left unbound can be taken meanwhile as the
// local port of any outgoing connection on the machine (another test's
// client, a peer's dial), and the node's restart then fails with "address
// already in use". Ports below the range are only ever bound on purpose.
const (
	nodePortLowest    = 20000 // clear of the well-known and registered services most hosts run
	ephemeralLowest   = 32768 // Linux's default low bound; BSDs and macOS start higher
	ephemeralRangeSys = "/proc/sys/net/ipv4/ip_local_port_range"
	freePortAttempts  = 200
)

// handedOut are the ports freePorts returned in this process: a port is
// closed again before its node binds it, so no port is handed out twice.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePorts returns a port p below the ephemeral range such that p and p+1
// are free on TCP (HTTP and Raft) and p is free on UDP (node RPC), and that
// no other test of this process was given.
func freePorts(t *testing.T) int {
	t.Helper()
	highest := ephemeralLow() - 2 // p+1 stays below the range too
	for range freePortAttempts {
		port := nodePortLowest + rand.IntN(highest-nodePortLowest+1)
		if portsFree(port) && claimPorts(port) {
			return port
		}
	}
	t.Fatalf("no free port pair in [%d, %d]", nodePortLowest, highest+1)
	return 0
}

// ephemeralLow is the low bound of the kernel's ephemeral port range, or
// Linux's default where the range cannot be read; never below the node
// ports' own floor plus a little room.
func ephemeralLow() int {
	low := ephemeralLowest
	if b, err := os.ReadFile(ephemeralRangeSys); err == nil {
		var lo, hi int
		if n, _ := fmt.Sscan(string(b), &lo, &hi); n == 2 && lo < low {
			low = lo
		}
	}
	return max(low, nodePortLowest+1000)
}

// portsFree reports whether port and port+1 (TCP) and port (UDP) can be
// bound now.
func portsFree(port int) bool {
	for _, l := range []struct {
		network string
		port    int
	}{{"tcp", port}, {"tcp", port + 1}, {"udp", port}} {
		addr := fmt.Sprintf("127.0.0.1:%d", l.port)
		if l.network == "udp" {
			c, err := net.ListenPacket(l.network, addr)
			if err != nil {
				return false
			}
			c.Close()
			continue
		}
		c, err := net.Listen(l.network, addr)
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

// claimPorts records port and port+1 as handed out, unless either was.
func claimPorts(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports[port] || handedOut.ports[port+1] {
		return false
	}
	handedOut.ports[port], handedOut.ports[port+1] = true, true
	return true
}

// ensure that a node's ports lie below the ephemeral range, where no
// outgoing connection takes them while a killed node is down.
func TestFreePortsAvoidTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 20 {
		if p := freePorts(t); p < nodePortLowest || p+1 >= low {
			t.Fatalf("freePorts gave %d (and %d); want both in [%d, %d)", p, p+1, nodePortLowest, low)
		}
	}
}
