package remotehttp

import (
	"net/netip"

	"github.com/narad/narad/domain"
)

// Refusal reasons: why the guard refused a destination, the `reason` label
// of narad_remote_destination_refused_total.
const (
	ReasonLoopback    = "loopback"
	ReasonUnspecified = "unspecified"
	ReasonLinkLocal   = "link_local"
	ReasonMulticast   = "multicast"
	ReasonBroadcast   = "broadcast"
	ReasonMetadata    = "metadata"
	ReasonPort        = "port"
	ReasonHost        = "host"
)

// reasonText says what each refusal means, and what would lift it.
var reasonText = map[string]string{
	ReasonLoopback:    "the host resolves to a loopback address (remotes.allow_addresses can allow it)",
	ReasonUnspecified: "the host resolves to an unspecified address (remotes.allow_addresses can allow it)",
	ReasonLinkLocal:   "the host resolves to a link-local address (remotes.allow_addresses can allow it)",
	ReasonMulticast:   "the host resolves to a multicast address (remotes.allow_addresses can allow it)",
	ReasonBroadcast:   "the host resolves to the broadcast address (remotes.allow_addresses can allow it)",
	ReasonMetadata:    "the host resolves to a cloud metadata address (remotes.allow_addresses can allow it)",
	ReasonPort:        "the port is not in remotes.allowed_ports",
	ReasonHost:        "the host is not in remotes.allowed_hosts",
}

// RefusedError is a destination the address guard, the allowed ports or
// the allowed hosts refused (internals.md §7.7). It wraps
// domain.ErrDestinationRefused and names neither the URL nor the address.
type RefusedError struct {
	Reason string // one of the Reason constants
}

func (e *RefusedError) Error() string {
	return domain.ErrDestinationRefused.Error() + ": " + reasonText[e.Reason]
}

func (e *RefusedError) Unwrap() error { return domain.ErrDestinationRefused }

// metadataPrefixes are the cloud metadata services' addresses, refused
// like loopback (internals.md §7.7).
var metadataPrefixes = []struct {
	prefix   netip.Prefix
	provider string
}{
	{netip.MustParsePrefix("169.254.0.0/16"), "AWS, GCP, Azure, OpenStack, DigitalOcean (169.254.169.254), AWS ECS (169.254.170.2)"},
	{netip.MustParsePrefix("fd00:ec2::/32"), "AWS over IPv6 (fd00:ec2::254)"},
	{netip.MustParsePrefix("fd20:ce::254/128"), "GCP over IPv6"},
	{netip.MustParsePrefix("100.100.100.200/32"), "Alibaba Cloud"},
	{netip.MustParsePrefix("192.0.0.192/32"), "Oracle Cloud"},
	{netip.MustParsePrefix("168.63.129.16/32"), "Azure WireServer"},
}

// ipv4Spellings are the IPv6 forms that carry an IPv4 address: the guard
// checks the embedded address too, so ::ffff:127.0.0.1 is loopback.
var ipv4Spellings = []struct {
	prefix netip.Prefix
	at     [4]int // byte offsets of the IPv4 octets in the IPv6 address
}{
	{netip.MustParsePrefix("::ffff:0:0/96"), [4]int{12, 13, 14, 15}}, // IPv4-mapped
	{netip.MustParsePrefix("::/96"), [4]int{12, 13, 14, 15}},         // IPv4-compatible (deprecated)
	{netip.MustParsePrefix("64:ff9b::/96"), [4]int{12, 13, 14, 15}},  // NAT64 well-known prefix
	{netip.MustParsePrefix("64:ff9b:1::/48"), [4]int{6, 7, 9, 10}},   // NAT64 local use (RFC 6052 /48 layout)
	{netip.MustParsePrefix("2002::/16"), [4]int{2, 3, 4, 5}},         // 6to4
}

var (
	broadcastIPv4   = netip.MustParseAddr("255.255.255.255")
	thisNetworkIPv4 = netip.MustParsePrefix("0.0.0.0/8")
)

// guard is the address guard: the refused classes, unless allow covers the
// address in one of its spellings.
type guard struct {
	allow []netip.Prefix
}

// check returns a *RefusedError when a may not be connected to.
func (g guard) check(a netip.Addr) error {
	a = a.WithZone("")
	embedded, hasEmbedded := embeddedIPv4(a)
	if g.allows(a) || hasEmbedded && g.allows(embedded) {
		return nil
	}
	if hasEmbedded {
		if reason := refusal(embedded); reason != "" {
			return &RefusedError{Reason: reason}
		}
	}
	if reason := refusal(a); reason != "" {
		return &RefusedError{Reason: reason}
	}
	return nil
}

func (g guard) allows(a netip.Addr) bool {
	for _, p := range g.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// refusal names the refused class of one address, or "".
func refusal(a netip.Addr) string {
	for _, m := range metadataPrefixes {
		if m.prefix.Contains(a) {
			return ReasonMetadata
		}
	}
	switch {
	case !a.IsValid() || a.IsUnspecified() || thisNetworkIPv4.Contains(a):
		return ReasonUnspecified
	case a.IsLoopback():
		return ReasonLoopback
	case a == broadcastIPv4:
		return ReasonBroadcast
	case a.IsMulticast():
		return ReasonMulticast
	case a.IsLinkLocalUnicast():
		return ReasonLinkLocal
	}
	return ""
}

// embeddedIPv4 returns the IPv4 address an IPv6 spelling carries (:: and
// ::1 are themselves, not IPv4-compatible spellings).
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a == netip.IPv6Unspecified() || a == netip.IPv6Loopback() {
		return netip.Addr{}, false
	}
	b := a.As16()
	for _, s := range ipv4Spellings {
		if s.prefix.Contains(a) {
			return netip.AddrFrom4([4]byte{b[s.at[0]], b[s.at[1]], b[s.at[2]], b[s.at[3]]}), true
		}
	}
	return netip.Addr{}, false
}
