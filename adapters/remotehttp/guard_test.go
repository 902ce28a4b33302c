package remotehttp_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/remotehttp"
	"github.com/narad/narad/domain"
)

// guardCases are addresses and the reason the guard refuses them ("" =
// allowed): every refused class, in IPv4-mapped, IPv4-compatible, NAT64
// and 6to4 spellings too, and the private ranges remotes normally use.
var guardCases = map[string]string{
	"127.0.0.1":              remotehttp.ReasonLoopback,
	"127.255.0.9":            remotehttp.ReasonLoopback,
	"::1":                    remotehttp.ReasonLoopback,
	"0.0.0.0":                remotehttp.ReasonUnspecified,
	"0.1.2.3":                remotehttp.ReasonUnspecified,
	"::":                     remotehttp.ReasonUnspecified,
	"169.254.169.254":        remotehttp.ReasonMetadata,
	"169.254.170.2":          remotehttp.ReasonMetadata,
	"169.254.1.1":            remotehttp.ReasonMetadata,
	"fd00:ec2::254":          remotehttp.ReasonMetadata,
	"100.100.100.200":        remotehttp.ReasonMetadata,
	"192.0.0.192":            remotehttp.ReasonMetadata,
	"::ffff:127.0.0.1":       remotehttp.ReasonLoopback,
	"::ffff:169.254.169.254": remotehttp.ReasonMetadata,
	"::ffff:0.0.0.0":         remotehttp.ReasonUnspecified,
	"::127.0.0.1":            remotehttp.ReasonLoopback,
	"64:ff9b::7f00:1":        remotehttp.ReasonLoopback,
	"64:ff9b::a9fe:a9fe":     remotehttp.ReasonMetadata,
	"64:ff9b:1:7f00:1:1::":   remotehttp.ReasonLoopback,
	"2002:7f00:1::1":         remotehttp.ReasonLoopback,
	"224.0.0.1":              remotehttp.ReasonMulticast,
	"239.1.2.3":              remotehttp.ReasonMulticast,
	"ff02::1":                remotehttp.ReasonMulticast,
	"ff05::2":                remotehttp.ReasonMulticast,
	"255.255.255.255":        remotehttp.ReasonBroadcast,
	"fe80::1":                remotehttp.ReasonLinkLocal,
	"10.1.2.3":               "",
	"192.168.1.1":            "",
	"172.16.0.1":             "",
	"fd12:3456::1":           "",
	"::ffff:10.1.2.3":        "",
	"64:ff9b::808:808":       "",
	"8.8.8.8":                "",
	"2001:4860:4860::8888":   "",
}

// ensure that the guard refuses loopback, unspecified, link-local,
// multicast, broadcast and metadata addresses in any spelling and lets
// private and public ones through (internals.md §7.7).
func TestGuardAddresses(t *testing.T) {
	t.Parallel()
	tr := newTransport(t, remotehttp.Options{})
	for addr, want := range guardCases {
		_, err := tr.CheckURL(context.Background(), "https://"+literal(addr))
		if got := refusalReason(t, err); got != want {
			t.Errorf("%s: refusal %q, want %q (%v)", addr, got, want, err)
		}
		if err != nil && !errors.Is(err, domain.ErrDestinationRefused) {
			t.Errorf("%s: %v does not wrap ErrDestinationRefused", addr, err)
		}
	}
}

// ensure that remotes.allow_addresses overrides a refusal, in the
// address's other spellings too, and nothing beyond its prefix.
func TestGuardAllowAddresses(t *testing.T) {
	t.Parallel()
	tr := newTransport(t, remotehttp.Options{AllowAddresses: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("169.254.169.254/32"),
	}})
	cases := map[string]string{
		"127.0.0.1":              "",
		"::ffff:127.0.0.1":       "",
		"64:ff9b::7f00:1":        "",
		"169.254.169.254":        "",
		"169.254.169.253":        remotehttp.ReasonMetadata,
		"::1":                    remotehttp.ReasonLoopback,
		"fd00:ec2::254":          remotehttp.ReasonMetadata,
		"::ffff:169.254.169.254": "",
	}
	for addr, want := range cases {
		_, err := tr.CheckURL(context.Background(), "https://"+literal(addr))
		if got := refusalReason(t, err); got != want {
			t.Errorf("%s: refusal %q, want %q", addr, got, want)
		}
	}
}

// ensure that CheckURL resolves the host and refuses it when any address
// it resolves to is refused, and returns the canonical URL otherwise.
func TestCheckURLResolvedAddresses(t *testing.T) {
	t.Parallel()
	tr := newTransport(t, remotehttp.Options{Resolver: newFakeResolver(map[string][]string{
		"private.example.com": {"10.0.0.7", "fd12::7"},
		"mixed.example.com":   {"8.8.8.8", "127.0.0.1"},
		"meta.example.com":    {"::ffff:169.254.169.254"},
		"empty.example.com":   {},
	})})
	ctx := context.Background()
	got, err := tr.CheckURL(ctx, "https://PRIVATE.example.com.:443/")
	if err != nil || got != "https://private.example.com" {
		t.Fatalf("private: %q %v", got, err)
	}
	if _, err := tr.CheckURL(ctx, "https://mixed.example.com"); refusalReason(t, err) != remotehttp.ReasonLoopback {
		t.Fatalf("mixed: %v, want a loopback refusal", err)
	}
	if _, err := tr.CheckURL(ctx, "https://meta.example.com"); refusalReason(t, err) != remotehttp.ReasonMetadata {
		t.Fatalf("meta: %v, want a metadata refusal", err)
	}
	for _, host := range []string{"missing.example.com", "empty.example.com"} {
		if _, err := tr.CheckURL(ctx, "https://"+host); !errors.Is(err, domain.ErrRemoteURL) {
			t.Fatalf("%s: %v, want ErrRemoteURL", host, err)
		}
	}
	if _, err := tr.CheckURL(ctx, "https://u:p@private.example.com"); !errors.Is(err, domain.ErrRemoteURL) {
		t.Fatalf("user info: %v, want ErrRemoteURL", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tr.CheckURL(canceled, "https://private.example.com"); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v, want context.Canceled", err)
	}
}

// ensure that CheckURL refuses a port outside remotes.allowed_ports
// (default [443]) and a host outside remotes.allowed_hosts when set;
// "*.example.com" matches names below example.com only.
func TestCheckURLPortsAndHosts(t *testing.T) {
	t.Parallel()
	resolver := newFakeResolver(map[string][]string{})
	for _, h := range []string{"a.example.com", "a.b.example.com", "example.com", "badexample.com", "remote.other.net", "x.remote.other.net"} {
		resolver.answers[h] = [][]netip.Addr{{netip.MustParseAddr("10.0.0.1")}}
	}
	ctx := context.Background()
	open := newTransport(t, remotehttp.Options{Resolver: resolver})
	if open.AllowlistSet() {
		t.Fatal("AllowlistSet with no allowed_hosts")
	}
	if _, err := open.CheckURL(ctx, "https://example.com"); err != nil {
		t.Fatalf("no allowlist: %v", err)
	}
	if _, err := open.CheckURL(ctx, "https://example.com:8443"); refusalReason(t, err) != remotehttp.ReasonPort {
		t.Fatalf("default ports: %v, want a port refusal", err)
	}
	listed := newTransport(t, remotehttp.Options{
		Resolver:     resolver,
		AllowedPorts: []int{443, 8443},
		AllowedHosts: []string{"*.Example.com", "REMOTE.other.net."},
	})
	if !listed.AllowlistSet() {
		t.Fatal("AllowlistSet false with allowed_hosts")
	}
	cases := map[string]string{
		"https://a.example.com":         "",
		"https://a.example.com:8443":    "",
		"https://a.b.example.com":       "",
		"https://example.com":           remotehttp.ReasonHost,
		"https://badexample.com":        remotehttp.ReasonHost,
		"https://remote.other.net":      "",
		"https://x.remote.other.net":    remotehttp.ReasonHost,
		"https://a.example.com:9443":    remotehttp.ReasonPort,
		"https://10.0.0.1":              remotehttp.ReasonHost,
		"https://a.example.com:443/api": "",
	}
	for raw, want := range cases {
		_, err := listed.CheckURL(ctx, raw)
		if got := refusalReason(t, err); got != want {
			t.Errorf("%s: refusal %q, want %q", raw, got, want)
		}
	}
}

// ensure that New refuses options outside their rules.
func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	cases := map[string]remotehttp.Options{
		"port_zero":      {AllowedPorts: []int{0}},
		"port_too_big":   {AllowedPorts: []int{443, 65536}},
		"host_space":     {AllowedHosts: []string{"bad host"}},
		"host_bare_star": {AllowedHosts: []string{"*"}},
		"host_star_dot":  {AllowedHosts: []string{"*."}},
		"host_inner_*":   {AllowedHosts: []string{"a.*.example.com"}},
		"host_star_ip":   {AllowedHosts: []string{"*.10.0.0.1"}},
		"host_empty":     {AllowedHosts: []string{""}},
		"prefix_invalid": {AllowAddresses: []netip.Prefix{{}}},
	}
	for name, o := range cases {
		if _, err := remotehttp.New(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	tr, err := remotehttp.New(remotehttp.Options{AllowedPorts: []int{1, 65535}, AllowedHosts: []string{"10.0.0.1", "[FD12::1]", "fd12::2"}})
	if err != nil {
		t.Fatalf("IP allowlist entries: %v", err)
	}
	for _, raw := range []string{"https://10.0.0.1:1", "https://[fd12::1]:65535", "https://[fd12::2]:1"} {
		if _, err := tr.CheckURL(context.Background(), raw); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

// ensure that a refusal's message says what was refused and how to lift
// it, without the address.
func TestRefusedErrorMessage(t *testing.T) {
	t.Parallel()
	tr := newTransport(t, remotehttp.Options{})
	_, err := tr.CheckURL(context.Background(), "https://169.254.169.254")
	msg := err.Error()
	if !strings.Contains(msg, "metadata") || !strings.Contains(msg, "remotes.allow_addresses") || strings.Contains(msg, "169.254") {
		t.Fatalf("message %q", msg)
	}
}

// ensure that the Control hook of the dialer refuses on its own: with the
// checks before it skipped, a loopback dial still never connects, and an
// allowed one does.
func TestDialControlHookRefuses(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	seen := &reasons{}
	guarded := newTransport(t, remotehttp.Options{AllowedPorts: []int{port}, Metrics: seen.add})
	conn, err := remotehttp.DialWithoutPrecheck(context.Background(), guarded, ln.Addr().String())
	if refusalReason(t, err) != remotehttp.ReasonLoopback {
		t.Fatalf("control hook: %v, want a loopback refusal", err)
	}
	if conn != nil {
		t.Fatal("a connection came back with the refusal")
	}
	if got := seen.list(); len(got) != 1 || got[0] != "lab/"+remotehttp.ReasonLoopback {
		t.Fatalf("metrics saw %v, want [lab/loopback]", got)
	}
	wrongPort := newTransport(t, remotehttp.Options{AllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if _, err := remotehttp.DialWithoutPrecheck(context.Background(), wrongPort, ln.Addr().String()); refusalReason(t, err) != remotehttp.ReasonPort {
		t.Fatalf("control hook port: %v, want a port refusal", err)
	}
	allowed := newTransport(t, remotehttp.Options{AllowedPorts: []int{port}, AllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	conn, err = remotehttp.DialWithoutPrecheck(context.Background(), allowed, ln.Addr().String())
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	_ = conn.Close()
}

// literal writes an address as a URL host.
func literal(addr string) string {
	if strings.Contains(addr, ":") {
		return "[" + addr + "]"
	}
	return addr
}
