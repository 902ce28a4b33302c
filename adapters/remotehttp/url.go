package remotehttp

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/narad/narad/domain"
)

// remoteURL is a remote URL in canonical form, split (internals.md §7.1,
// the `url` row): host is lowercased IDNA-ASCII without a trailing dot, or
// an IP literal without brackets or zone.
type remoteURL struct {
	host string
	ip   netip.Addr // valid when host is an IP literal
	port int
	path string // "" or starting with "/"; never just "/"
}

// String is the canonical URL.
func (u remoteURL) String() string {
	host := u.host
	if u.ip.Is6() {
		host = "[" + host + "]"
	}
	if u.port != defaultPortNumber {
		host += ":" + strconv.Itoa(u.port)
	}
	return "https://" + host + u.path
}

// CanonicalURL checks raw against the URL rule of internals.md §7.7
// (`https://host[:port][/path]`, no user info, query or fragment, at most
// 2,048 bytes, the host IDNA-ASCII or an IP literal without zone) and
// returns its canonical form: lowercased host without a trailing dot, the
// default port 443 left out, the path kept ("/" alone dropped). Errors wrap
// domain.ErrRemoteURL and name the rule, never the URL.
func CanonicalURL(raw string) (string, error) {
	u, err := parseRemoteURL(raw)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// parseRemoteURL canonicalizes raw, then checks that the canonical form is
// a fixed point, so a stored URL always compares equal to itself re-read.
func parseRemoteURL(raw string) (remoteURL, error) {
	u, err := canonicalize(raw)
	if err != nil {
		return remoteURL{}, err
	}
	again, err := canonicalize(u.String())
	if err != nil || again != u {
		return remoteURL{}, urlError("does not have a stable canonical form")
	}
	return u, nil
}

func canonicalize(raw string) (remoteURL, error) {
	if len(raw) > urlMaxBytes {
		return remoteURL{}, urlError(fmt.Sprintf("longer than %d bytes", urlMaxBytes))
	}
	if strings.ContainsRune(raw, '?') {
		return remoteURL{}, urlError("has a query")
	}
	if strings.ContainsRune(raw, '#') {
		return remoteURL{}, urlError("has a fragment")
	}
	// url.Parse's own error quotes the input, which may hold a password:
	// it is dropped.
	parsed, err := url.Parse(raw)
	if err != nil {
		return remoteURL{}, urlError("is not a URL")
	}
	if parsed.Scheme != "https" {
		return remoteURL{}, urlError("is not https")
	}
	if parsed.User != nil {
		return remoteURL{}, urlError("has user info")
	}
	if parsed.Opaque != "" || parsed.Host == "" {
		return remoteURL{}, urlError("has no host")
	}
	u, err := splitHostPort(parsed.Host)
	if err != nil {
		return remoteURL{}, err
	}
	u.path = parsed.EscapedPath()
	if u.path == "/" {
		u.path = ""
	}
	if len(u.String()) > urlMaxBytes {
		return remoteURL{}, urlError(fmt.Sprintf("longer than %d bytes in canonical form", urlMaxBytes))
	}
	return u, nil
}

// splitHostPort canonicalizes a URL authority without user info:
// "host", "host:port", "[v6]" or "[v6]:port".
func splitHostPort(authority string) (remoteURL, error) {
	hostPart, portPart := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.HasSuffix(authority, "]") {
		hostPart, portPart = authority[:i], authority[i+1:]
		if portPart == "" {
			return remoteURL{}, urlError("has an empty port")
		}
	}
	port := defaultPortNumber
	if portPart != "" {
		n, err := parsePort(portPart)
		if err != nil {
			return remoteURL{}, err
		}
		port = n
	}
	if strings.HasPrefix(hostPart, "[") {
		return bracketedHost(hostPart, port)
	}
	host, ip, err := canonicalHost(hostPart)
	if err != nil {
		return remoteURL{}, err
	}
	return remoteURL{host: host, ip: ip, port: port}, nil
}

func parsePort(s string) (int, error) {
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, urlError("has a port that is not a number")
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > portMaxNumber {
		return 0, urlError(fmt.Sprintf("has a port outside 1-%d", portMaxNumber))
	}
	return n, nil
}

// bracketedHost canonicalizes "[v6]": an IPv6 literal without zone.
func bracketedHost(s string, port int) (remoteURL, error) {
	inner, ok := strings.CutSuffix(strings.TrimPrefix(s, "["), "]")
	if !ok || strings.ContainsRune(inner, '%') {
		return remoteURL{}, urlError("has an IPv6 literal with a zone or without its closing bracket")
	}
	ip, err := netip.ParseAddr(inner)
	if err != nil || !ip.Is6() {
		return remoteURL{}, urlError("has an invalid IPv6 literal")
	}
	return remoteURL{host: ip.String(), ip: ip, port: port}, nil
}

// canonicalHost canonicalizes an unbracketed host: a dotted-quad IPv4
// address, or a DNS name turned into lowercased IDNA-ASCII without its
// trailing dot. ip is valid for an address.
func canonicalHost(s string) (host string, ip netip.Addr, err error) {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", netip.Addr{}, urlError("has an empty host")
	}
	if strings.ContainsRune(s, '%') {
		return "", netip.Addr{}, urlError("has a host with a zone or an escape")
	}
	if ip, err := netip.ParseAddr(s); err == nil {
		if !ip.Is4() {
			return "", netip.Addr{}, urlError("has an IPv6 literal without brackets")
		}
		return ip.String(), ip, nil
	}
	ascii, err := idna.Lookup.ToASCII(s)
	if err != nil {
		return "", netip.Addr{}, urlError("has a host that is not a valid domain name")
	}
	if err := checkDNSName(ascii); err != nil {
		return "", netip.Addr{}, err
	}
	return ascii, netip.Addr{}, nil
}

// checkDNSName holds a host to letters, digits and hyphens in labels of
// 1-63 bytes, 253 bytes in all, and refuses a numeric last label: "127.1"
// or "0x7f.1" are addresses to some resolvers, not names.
func checkDNSName(name string) error {
	if len(name) > hostMaxBytes {
		return urlError(fmt.Sprintf("has a host longer than %d bytes", hostMaxBytes))
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if len(label) == 0 || len(label) > labelMaxBytes {
			return urlError("has a host with an empty or over-long label")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return urlError("has a host label starting or ending with a hyphen")
		}
		for i := 0; i < len(label); i++ {
			if !isLDH(label[i]) {
				return urlError("has a host that is not a valid domain name")
			}
		}
	}
	if looksNumeric(labels[len(labels)-1]) {
		return urlError("has a numeric host that is not a dotted-quad IPv4 address")
	}
	return nil
}

func isLDH(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

// looksNumeric reports whether a label reads as a number: all digits, or
// a 0x-prefixed hexadecimal.
func looksNumeric(label string) bool {
	digits := strings.TrimPrefix(label, "0x")
	if digits == "" {
		return label == "0x"
	}
	hex := digits != label
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c >= '0' && c <= '9' || hex && c >= 'a' && c <= 'f' {
			continue
		}
		return false
	}
	return true
}

// urlError wraps domain.ErrRemoteURL with the rule the URL broke.
func urlError(rule string) error {
	return fmt.Errorf("%w: url %s", domain.ErrRemoteURL, rule)
}
