package bootstrap

import (
	"bytes"
	"strings"
	"testing"

	"github.com/narad/narad/bootstrap/config"
)

// ensure that --dev says loudly that it overrides NARAD_SECURITY_ENABLED=true,
// and stays quiet about it otherwise.
func TestDevBannerWarnsWhenOverridingSecurity(t *testing.T) {
	cfg := config.Default()
	for _, c := range []struct {
		env  map[string]string
		warn bool
	}{
		{map[string]string{"NARAD_SECURITY_ENABLED": "true"}, true},
		{map[string]string{"NARAD_SECURITY_ENABLED": "1"}, true},
		{map[string]string{"NARAD_SECURITY_ENABLED": "false"}, false},
		{map[string]string{}, false},
	} {
		var out bytes.Buffer
		devBanner(&out, cfg, func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		got := out.String()
		if strings.Contains(got, "WARNING: --dev overrides NARAD_SECURITY_ENABLED") != c.warn || !strings.Contains(got, "dev mode: auth OFF") {
			t.Errorf("env %v: %q", c.env, got)
		}
	}
}
