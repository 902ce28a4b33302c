package remotehttp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/remotehttp"
	"github.com/narad/narad/domain"
)

// ensure that CanonicalURL accepts https://host[:port][/path] and returns
// the canonical form of internals.md §7.7: lowercased host without a
// trailing dot, :443 dropped, other ports and the path kept.
func TestCanonicalURLAccepts(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"https://remote.example.com":               "https://remote.example.com",
		"https://REMOTE.Example.COM/":              "https://remote.example.com",
		"https://remote.example.com./":             "https://remote.example.com",
		"https://remote.example.com:443":           "https://remote.example.com",
		"https://remote.example.com:0443/":         "https://remote.example.com",
		"https://remote.example.com:8443":          "https://remote.example.com:8443",
		"HTTPS://remote.example.com:8443/narad":    "https://remote.example.com:8443/narad",
		"https://remote.example.com/narad/":        "https://remote.example.com/narad/",
		"https://remote.example.com/a%20b":         "https://remote.example.com/a%20b",
		"https://[::1]:8443":                       "https://[::1]:8443",
		"https://[2001:DB8::0001]/x":               "https://[2001:db8::1]/x",
		"https://[::ffff:10.0.0.1]":                "https://[::ffff:10.0.0.1]",
		"https://10.0.0.1:9443/":                   "https://10.0.0.1:9443",
		"https://bücher.example":                   "https://xn--bcher-kva.example",
		"https://xn--bcher-kva.example":            "https://xn--bcher-kva.example",
		"https://a-b.c-d.example/v1":               "https://a-b.c-d.example/v1",
		"https://remote.example.com/" + long(2000): "https://remote.example.com/" + long(2000),
	}
	for raw, want := range cases {
		got, err := remotehttp.CanonicalURL(raw)
		if err != nil {
			t.Errorf("CanonicalURL(%q): %v", raw, err)
			continue
		}
		if got != want {
			t.Errorf("CanonicalURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// ensure that CanonicalURL refuses everything outside the URL rule with
// an error wrapping domain.ErrRemoteURL.
func TestCanonicalURLRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"http":              "http://remote.example.com",
		"no_scheme":         "remote.example.com",
		"ftp":               "ftp://remote.example.com",
		"user_info":         "https://user@remote.example.com",
		"user_password":     "https://user:pw@remote.example.com",
		"query":             "https://remote.example.com/?a=1",
		"empty_query":       "https://remote.example.com/?",
		"fragment":          "https://remote.example.com/#top",
		"empty_fragment":    "https://remote.example.com#",
		"too_long":          "https://remote.example.com/" + long(2048),
		"zone_id":           "https://[fe80::1%25eth0]:8443",
		"empty_host":        "https:///path",
		"only_port":         "https://:8443",
		"empty_port":        "https://remote.example.com:",
		"port_zero":         "https://remote.example.com:0",
		"port_too_big":      "https://remote.example.com:65536",
		"v4_in_brackets":    "https://[10.0.0.1]",
		"bad_v6":            "https://[::1::2]",
		"underscore":        "https://my_host.example.com",
		"space":             "https://remote example.com",
		"empty_label":       "https://remote..example.com",
		"hyphen_label":      "https://-remote.example.com",
		"numeric_host":      "https://2130706433",
		"short_v4":          "https://127.1",
		"hex_v4":            "https://0x7f.0.0.1",
		"octal_v4":          "https://0177.0.0.1",
		"label_too_long":    "https://" + long(64) + ".example.com",
		"opaque":            "https:remote.example.com",
		"percent_host":      "https://remote%2Eexample.com%25",
		"backslash":         "https://remote.example.com\\@evil.example",
		"bad_punycode":      "https://xn--a.example",
		"trailing_dots":     "https://remote.example.com..",
		"just_dot":          "https://./",
		"control_character": "https://remote.example.com/\x00",
	}
	for name, raw := range cases {
		got, err := remotehttp.CanonicalURL(raw)
		if err == nil {
			t.Errorf("%s: CanonicalURL(%q) = %q, want an error", name, raw, got)
			continue
		}
		if !errors.Is(err, domain.ErrRemoteURL) {
			t.Errorf("%s: error %v does not wrap ErrRemoteURL", name, err)
		}
	}
}

// ensure that a refusal names the rule and never echoes the URL, so a
// password in user info does not reach a log line or an API answer.
func TestCanonicalURLErrorHidesCredentials(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"https://admin:hunter2secret@remote.example.com",
		"https://remote.example.com/?token=hunter2secret",
		"http://admin:hunter2secret@remote.example.com",
		"https://admin:hunter2secret@[::1%zz",
	} {
		_, err := remotehttp.CanonicalURL(raw)
		if err == nil {
			t.Fatalf("%q accepted", raw)
		}
		if strings.Contains(err.Error(), "hunter2secret") || strings.Contains(err.Error(), "admin") {
			t.Errorf("error %q echoes the URL", err)
		}
	}
}

// ensure that CanonicalURL never panics, that whatever it accepts is a
// fixed point and fits the length bound, and that whatever it refuses
// wraps ErrRemoteURL.
func FuzzCanonicalURL(f *testing.F) {
	for _, seed := range []string{
		"https://remote.example.com", "https://REMOTE.example.com.:443/",
		"https://[::1]:8443/x", "https://bücher.example/ä", "https://u:p@h",
		"https://h/?q#f", "https://10.0.0.1:65535", "https://[fe80::1%25en0]",
		"https://h/%zz", "https://xn--bcher-kva.example/a%2Fb", "https://h:0",
		"https://1.2.3.4.", "https://0x10", "https://a.b-.c",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := remotehttp.CanonicalURL(raw)
		if err != nil {
			if !errors.Is(err, domain.ErrRemoteURL) {
				t.Fatalf("CanonicalURL(%q) error %v does not wrap ErrRemoteURL", raw, err)
			}
			return
		}
		if len(got) > 2048 || !strings.HasPrefix(got, "https://") {
			t.Fatalf("CanonicalURL(%q) = %q: not a bounded https URL", raw, got)
		}
		again, err := remotehttp.CanonicalURL(got)
		if err != nil || again != got {
			t.Fatalf("CanonicalURL(%q) = %q, which re-canonicalizes to %q, %v", raw, got, again, err)
		}
	})
}

func long(n int) string { return strings.Repeat("a", n) }
