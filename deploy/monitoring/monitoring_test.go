package monitoring

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// ensure that the rules load and every alert passes its promtool unit test.
func TestAlertRulesPassPromtool(t *testing.T) {
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		out, err := exec.Command("go", append([]string{"tool", "promtool"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert string `yaml:"alert"`
			Expr  string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type ruleTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// ensure that every alert has a test case in which it fires.
func TestEveryAlertHasAFiringTest(t *testing.T) {
	var rules ruleFile
	var tests ruleTests
	readYAML(t, "alerts.yml", &rules)
	readYAML(t, "alerts_test.yml", &tests)
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			}
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if !fires[r.Alert] {
				t.Errorf("alert %s has no test in which it fires", r.Alert)
			}
		}
	}
}

type dashboard struct {
	Templating struct {
		List []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("narad-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("narad-dashboard.json: %v", err)
	}
	return d
}

// ensure that every panel has a unique id and reads from the datasource
// template variable, which the dashboard defines.
func TestDashboardPanels(t *testing.T) {
	d := readDashboard(t)
	hasVar := false
	for _, v := range d.Templating.List {
		hasVar = hasVar || (v.Name == "datasource" && v.Type == "datasource")
	}
	if !hasVar {
		t.Fatal("the dashboard has no datasource template variable")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type != "row" && (p.Datasource == nil || p.Datasource.UID != "${datasource}") {
			t.Errorf("panel %q does not read from ${datasource}", p.Title)
		}
	}
}

// grafanaVars are the dashboard's variables, replaced by values PromQL parses.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$instance", ".*")

// ensure that every metric the rules and the dashboard read is one a node
// exports: listed in docs/metrics.md, a histogram's _bucket/_sum/_count,
// the Go runtime's go_* and process_*, or Prometheus's own up.
func TestEveryMetricIsExported(t *testing.T) {
	raw, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"up": true}
	for _, m := range regexp.MustCompile("\\| `(narad_[a-z0-9_]+)` \\|").FindAllStringSubmatch(string(raw), -1) {
		known[m[1]] = true
	}
	if len(known) < 40 {
		t.Fatalf("read only %d metrics from docs/metrics.md", len(known))
	}
	exported := func(name string) bool {
		if known[name] || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && known[base] {
				return true
			}
		}
		return false
	}
	var exprs []string
	var rules ruleFile
	readYAML(t, "alerts.yml", &rules)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	for _, p := range readDashboard(t).Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, grafanaVars.Replace(tg.Expr))
		}
	}
	for _, e := range exprs {
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(e)
		if err != nil {
			t.Errorf("%q does not parse: %v", e, err)
			continue
		}
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok && !exported(vs.Name) {
				t.Errorf("%q reads %s, which a node does not export", e, vs.Name)
			}
			return nil
		})
	}
}
