package membership

import (
	"net"
	"strconv"
)

// validHint reports whether a 421 answer's leader address may be followed
// (internals §9.3): host:port within 261 bytes, a host, a non-zero port.
func validHint(addr string) bool {
	if addr == "" || len(addr) > joinHintAddrMaxBytes {
		return false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	p, err := strconv.ParseUint(port, 10, 16)
	return err == nil && p != 0
}

// leaderMemory keeps the leader addresses learned on earlier attempts,
// most recent first, at most joinLeadersRememberedMax. Not safe for
// concurrent use (the join loop owns it).
type leaderMemory struct {
	addrs []string
}

// remember puts addr first, dropping an older copy and the oldest address
// past the cap.
func (m *leaderMemory) remember(addr string) {
	out := make([]string, 0, joinLeadersRememberedMax)
	out = append(out, addr)
	for _, a := range m.addrs {
		if a != addr && len(out) < joinLeadersRememberedMax {
			out = append(out, a)
		}
	}
	m.addrs = out
}

// candidates lists the addresses one attempt walks: remembered leaders,
// most recent first, then the configured peers, each once.
func (m *leaderMemory) candidates(peers []string) []string {
	seen := make(map[string]bool, len(m.addrs)+len(peers))
	out := make([]string, 0, len(m.addrs)+len(peers))
	for _, list := range [][]string{m.addrs, peers} {
		for _, a := range list {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}
