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

// ephemeralLow is the low bound of the kernel's ephemeral port range (read
// once), or Linux's default where the range cannot be read or starts
// higher. A range that starts below nodePortLowest+1000 leaves no room
// under it: the node ports then come from [nodePortLowest, +1000) anyway.
var ephemeralLow = sync.OnceValue(func() int {
	low := ephemeralLowest
	if b, err := os.ReadFile(ephemeralRangeSys); err == nil {
		var lo int
		if _, err := fmt.Sscan(string(b), &lo); err == nil && lo < low {
			low = lo
		}
	}
	return max(low, nodePortLowest+1000)
})

// portsFree reports whether port and port+1 (TCP) and port (UDP) can be
// bound now.
func portsFree(port int) bool {
	return tcpFree(port) && tcpFree(port+1) && udpFree(port)
}

func tcpFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err == nil {
		l.Close()
	}
	return err == nil
}

func udpFree(port int) bool {
	c, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err == nil {
		c.Close()
	}
	return err == nil
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
