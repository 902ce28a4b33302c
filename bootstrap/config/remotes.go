package config

import (
	"net/netip"
	"slices"
	"strings"
)

// portMax is the largest TCP port.
const portMax = 65535

// validateRemotes checks the remotes section (api.md §6.3): settings off
// their defaults need security on; allowed_ports names at least one port
// in 1-65535; allow_addresses are CIDRs; allowed_hosts are canonical host
// names or *.suffix patterns; max_held_bytes is not negative.
func (c Config) validateRemotes(bad func(string, ...any)) {
	r, d := c.Remotes, Default().Remotes
	if !c.Security.Enabled {
		for _, k := range []struct {
			key     string
			changed bool
		}{
			{"remotes.allowed_hosts", len(r.AllowedHosts) > 0}, {"remotes.allowed_ports", !slices.Equal(r.AllowedPorts, d.AllowedPorts)},
			{"remotes.allow_addresses", len(r.AllowAddresses) > 0}, {"remotes.max_held_bytes", r.MaxHeldBytes != d.MaxHeldBytes},
			{"remotes.api_hop_encrypted", r.APIHopEncrypted},
		} {
			if k.changed {
				bad("remotes settings require security.enabled: %s is set", k.key)
			}
		}
	}
	if len(r.AllowedPorts) == 0 {
		bad("remotes.allowed_ports must name at least one port")
	}
	for _, p := range r.AllowedPorts {
		if p < 1 || p > portMax {
			bad("remotes.allowed_ports: %d is not a port (1-%d)", p, portMax)
		}
	}
	for _, a := range r.AllowAddresses {
		if _, err := netip.ParsePrefix(a); err != nil {
			bad("remotes.allow_addresses: %q is not a CIDR", a)
		}
	}
	for _, h := range r.AllowedHosts {
		if !canonicalHostPattern(h) {
			bad("remotes.allowed_hosts: %q is not a lowercase host name or *.suffix", h)
		}
	}
	if r.MaxHeldBytes < 0 {
		bad("remotes.max_held_bytes (%d) must be >= 0", r.MaxHeldBytes)
	}
}

// canonicalHostPattern reports whether h is a host as remote URLs store it
// (lowercase ASCII labels of a-z 0-9 -, no trailing dot) or *. before one.
func canonicalHostPattern(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
