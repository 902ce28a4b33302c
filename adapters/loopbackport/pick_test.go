package loopbackport

import (
	"fmt"
	"net"
	"testing"
)

// ensure that picked ports lie below the ephemeral range, where no
// outgoing connection takes them while a stopped server is down.
func TestPickAvoidsTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 20 {
		if p := Pick(t, 2); p < lowestPort || p+1 >= low {
			t.Fatalf("Pick gave %d (and %d); want both in [%d, %d)", p, p+1, lowestPort, low)
		}
	}
}

// ensure that no port is handed out twice in a process, however a pick's
// width overlaps an earlier one.
func TestPickNeverRepeatsAPort(t *testing.T) {
	seen := map[int]bool{}
	for i := range 200 {
		width := 1 + i%3
		p := Pick(t, width)
		for q := p; q < p+width; q++ {
			if seen[q] {
				t.Fatalf("port %d handed out twice", q)
			}
			seen[q] = true
		}
	}
}

// ensure that a port a listener holds counts as taken, alone or as the
// second port of a wider pick, on TCP and on UDP.
func TestBoundPortIsNotFree(t *testing.T) {
	p := Pick(t, 1)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if free(p, 1) || free(p-1, 2) {
		t.Fatalf("TCP port %d is bound, yet free(%d, 1) = %v, free(%d, 2) = %v", p, p, free(p, 1), p-1, free(p-1, 2))
	}
	q := Pick(t, 1)
	c, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", q))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if free(q, 1) {
		t.Fatalf("UDP port %d is bound, yet counted free", q)
	}
}
