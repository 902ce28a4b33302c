package config

import (
	"strings"
	"testing"
)

// ensure that the remotes section loads with security on, and each rule of
// api.md §6.3 refuses a bad value naming its setting.
func TestRemotesSettings(t *testing.T) {
	secured := func(extra map[string]string) map[string]string {
		m := map[string]string{"NARAD_SECURITY_ENABLED": "true", "NARAD_ROOT_PASSWORD": "a-root-password-of-some-length"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	c, err := Load(Source{Env: env(secured(map[string]string{
		"NARAD_REMOTES_ALLOWED_HOSTS": "dr.example.com,*.backup.example.com", "NARAD_REMOTES_ALLOWED_PORTS": "443,8443",
		"NARAD_REMOTES_ALLOW_ADDRESSES": "127.0.0.0/8", "NARAD_REMOTES_API_HOP_ENCRYPTED": "true", "NARAD_REMOTES_MAX_HELD_BYTES": "1048576",
	}))})
	if err != nil {
		t.Fatalf("valid remotes settings refused: %v", err)
	}
	if len(c.Remotes.AllowedHosts) != 2 || len(c.Remotes.AllowedPorts) != 2 || !c.Remotes.APIHopEncrypted || c.Remotes.MaxHeldBytes != 1<<20 {
		t.Fatalf("loaded %+v", c.Remotes)
	}
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"NARAD_SECURITY_ENABLED": "false", "NARAD_REMOTES_API_HOP_ENCRYPTED": "true"}, "remotes settings require security.enabled: remotes.api_hop_encrypted"},
		{map[string]string{"NARAD_SECURITY_ENABLED": "false", "NARAD_REMOTES_ALLOWED_PORTS": "8443"}, "remotes settings require security.enabled: remotes.allowed_ports"},
		{secured(map[string]string{"NARAD_REMOTES_ALLOWED_PORTS": "0"}), "remotes.allowed_ports: 0 is not a port"},
		{secured(map[string]string{"NARAD_REMOTES_ALLOW_ADDRESSES": "10.0.0.1"}), `remotes.allow_addresses: "10.0.0.1" is not a CIDR`},
		{secured(map[string]string{"NARAD_REMOTES_ALLOWED_HOSTS": "DR.example.com"}), `remotes.allowed_hosts: "DR.example.com"`},
		{secured(map[string]string{"NARAD_REMOTES_ALLOWED_HOSTS": "dr.example.com."}), `remotes.allowed_hosts: "dr.example.com."`},
		{secured(map[string]string{"NARAD_REMOTES_MAX_HELD_BYTES": "-1"}), "remotes.max_held_bytes (-1) must be >= 0"},
	}
	for _, c := range cases {
		_, err := Load(Source{Env: env(c.env)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.env, err, c.want)
		}
	}
}
