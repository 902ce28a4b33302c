package remotehttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var (
	_ ports.RemoteTransport = (*Transport)(nil)
	_ ports.RemoteClient    = (*client)(nil)
)

// Resolver resolves a host to its addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options are the node's remotes.* bounds (api.md §6.1): node config, not
// API fields, so an admin cannot widen them.
type Options struct {
	// AllowedPorts are the ports a remote URL may name; empty means [443].
	AllowedPorts []int
	// AllowedHosts are canonical host names ("remote.example.com") and
	// suffix patterns ("*.example.com" matches any name below
	// example.com, not example.com itself); empty means no allowlist.
	AllowedHosts []string
	// AllowAddresses are the addresses the guard lets through although
	// they are loopback, link-local, multicast, broadcast or metadata.
	AllowAddresses []netip.Prefix
	// Resolver resolves remote hosts at CheckURL and at every dial;
	// nil means net.DefaultResolver.
	Resolver Resolver
	// Metrics, when set, is called with the remote's name and the reason
	// of every dial the guard refuses (narad_remote_destination_refused_total).
	Metrics func(remote, reason string)
}

// Transport is the outbound transport to remotes (internals.md §7.7). It is
// immutable once built and safe for concurrent use.
type Transport struct {
	ports    map[int]bool
	hosts    allowlist
	guard    guard
	resolver Resolver
	metrics  func(remote, reason string)
}

// New validates o and builds the transport.
func New(o Options) (*Transport, error) {
	t := &Transport{
		ports:    map[int]bool{},
		resolver: o.Resolver,
		metrics:  o.Metrics,
	}
	if t.resolver == nil {
		t.resolver = net.DefaultResolver
	}
	if t.metrics == nil {
		t.metrics = func(string, string) {}
	}
	if len(o.AllowedPorts) == 0 {
		t.ports[defaultPortNumber] = true
	}
	for _, p := range o.AllowedPorts {
		if p < 1 || p > portMaxNumber {
			return nil, fmt.Errorf("remotehttp: remotes.allowed_ports: %d is outside 1-%d", p, portMaxNumber)
		}
		t.ports[p] = true
	}
	hosts, err := newAllowlist(o.AllowedHosts)
	if err != nil {
		return nil, err
	}
	t.hosts = hosts
	for _, p := range o.AllowAddresses {
		if !p.IsValid() {
			return nil, errors.New("remotehttp: remotes.allow_addresses holds an invalid prefix")
		}
		t.guard.allow = append(t.guard.allow, p.Masked())
	}
	return t, nil
}

// AllowlistSet reports whether remotes.allowed_hosts is set.
func (t *Transport) AllowlistSet() bool { return t.hosts.set() }

// CheckURL checks raw against the URL rule, the allowed ports and hosts,
// resolves the host and runs the guard on every address it resolves to
// (any refused address refuses the URL). It returns the canonical URL.
func (t *Transport) CheckURL(ctx context.Context, raw string) (string, error) {
	u, err := parseRemoteURL(raw)
	if err != nil {
		return "", err
	}
	if err := t.checkDestination(u.host, u.port); err != nil {
		return "", err
	}
	addrs, err := t.resolve(ctx, u.host)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", ctxErr
		}
		return "", fmt.Errorf("%w: url host does not resolve", domain.ErrRemoteURL)
	}
	for _, a := range addrs {
		if err := t.guard.check(a); err != nil {
			return "", err
		}
	}
	return u.String(), nil
}

// checkDestination checks a canonical host and a port against the allowed
// ports and hosts.
func (t *Transport) checkDestination(host string, port int) error {
	if !t.ports[port] {
		return &RefusedError{Reason: ReasonPort}
	}
	if !t.hosts.allows(host) {
		return &RefusedError{Reason: ReasonHost}
	}
	return nil
}

// resolve returns an IP literal itself, else what the resolver answers;
// an empty answer is an error.
func (t *Transport) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	addrs, err := t.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

// allowlist is remotes.allowed_hosts: exact canonical names or IP
// addresses, and suffixes (".example.com" for "*.example.com").
type allowlist struct {
	exact    map[string]bool
	suffixes []string
}

func newAllowlist(entries []string) (allowlist, error) {
	l := allowlist{exact: map[string]bool{}}
	for _, e := range entries {
		if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]")); err == nil && ip.Zone() == "" {
			l.exact[ip.String()] = true
			continue
		}
		pattern, wildcard := strings.CutPrefix(e, "*.")
		host, ip, err := canonicalHost(pattern)
		if err != nil || wildcard && ip.IsValid() {
			return allowlist{}, fmt.Errorf("remotehttp: remotes.allowed_hosts: entry %q is not a host name or a *.suffix pattern", e)
		}
		if wildcard {
			l.suffixes = append(l.suffixes, "."+host)
		} else {
			l.exact[host] = true
		}
	}
	return l, nil
}

func (l allowlist) set() bool { return len(l.exact)+len(l.suffixes) > 0 }

// allows reports whether a canonical host passes; everything passes an
// unset list.
func (l allowlist) allows(host string) bool {
	if !l.set() || l.exact[host] {
		return true
	}
	for _, s := range l.suffixes {
		if len(host) > len(s) && strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}
