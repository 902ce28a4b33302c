package loopbackport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// A test's ports come from below the kernel's ephemeral range: a port in
// that range that a stopped server left unbound can be taken meanwhile as
// the local port of any outgoing connection on the machine (another test's
// client, a peer's dial), and the server's restart on it then fails with
// "address already in use". Ports below the range are only ever bound on
// purpose.
const (
	lowestPort        = 20000 // clear of the well-known and registered services most hosts run
	ephemeralLowest   = 32768 // Linux's default low bound; BSDs and macOS start higher
	ephemeralRangeSys = "/proc/sys/net/ipv4/ip_local_port_range"
	pickAttempts      = 200
)

// handedOut are the ports Pick returned in this process: a port is closed
// again before its server binds it, so no port is handed out twice.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Pick returns a port p below the ephemeral range such that the TCP ports
// p to p+width-1 and the UDP port p are free on 127.0.0.1, and that no
// earlier Pick of this process returned any of them.
func Pick(t testing.TB, width int) int {
	t.Helper()
	highest := ephemeralLow() - width // p+width-1 stays below the range too
	for range pickAttempts {
		port := lowestPort + rand.IntN(highest-lowestPort+1)
		if free(port, width) && claim(port, width) {
			return port
		}
	}
	t.Fatalf("no %d free loopback ports in [%d, %d)", width, lowestPort, highest+width)
	return 0
}

// Addr is Pick(t, 1) as a 127.0.0.1 address.
func Addr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", Pick(t, 1))
}

// ephemeralLow is the low bound of the kernel's ephemeral port range (read
// once), or Linux's default where the range cannot be read or starts
// higher. A range that starts below lowestPort+1000 leaves no room under
// it: ports then come from [lowestPort, lowestPort+1000) anyway.
var ephemeralLow = sync.OnceValue(func() int {
	low := ephemeralLowest
	if b, err := os.ReadFile(ephemeralRangeSys); err == nil {
		var lo int
		if _, err := fmt.Sscan(string(b), &lo); err == nil && lo < low {
			low = lo
		}
	}
	return max(low, lowestPort+1000)
})

// free reports whether TCP ports port to port+width-1 and UDP port port
// can be bound now.
func free(port, width int) bool {
	for p := port; p < port+width; p++ {
		if !tcpFree(p) {
			return false
		}
	}
	return udpFree(port)
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

// claim records port to port+width-1 as handed out, unless one of them was.
func claim(port, width int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	for p := port; p < port+width; p++ {
		if handedOut.ports[p] {
			return false
		}
	}
	for p := port; p < port+width; p++ {
		handedOut.ports[p] = true
	}
	return true
}
