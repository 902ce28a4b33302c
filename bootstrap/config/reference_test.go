package config

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// referenceDoc is the configuration reference users read.
const referenceDoc = "../../docs/configuration.md"

// hostDefaultKey is the one key whose default depends on the machine.
const hostDefaultKey = "cluster.node_id"

// ensure that docs/configuration.md lists every key of Config, no other,
// each with the default Default() sets (as JSON) and the NARAD_* variable
// that sets it, and every environment-only secret the loader reads.
func TestReferenceDocMatchesTheConfig(t *testing.T) {
	raw, err := os.ReadFile(referenceDoc)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ def, env string }
	doc := map[string]row{}
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") || !strings.Contains(cells[1], ".") {
			continue
		}
		key := strings.Trim(strings.TrimSpace(cells[1]), "`")
		doc[key] = row{def: strings.TrimSpace(cells[2]), env: strings.Trim(strings.TrimSpace(cells[3]), "`")}
	}
	envOf := map[string]string{}
	for env, key := range envKeys {
		envOf[key] = env
	}
	code := map[string]reflect.Value{}
	collectKeys(reflect.ValueOf(Default()), "", code)
	for key, v := range code {
		r, ok := doc[key]
		if !ok {
			t.Errorf("%s is not in %s", key, referenceDoc)
			continue
		}
		b, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		if want := "`" + string(b) + "`"; key != hostDefaultKey && r.def != want {
			t.Errorf("%s: the reference says default %s, the code %s", key, r.def, want)
		}
		if r.env != envOf[key] {
			t.Errorf("%s: the reference names variable %q, the loader %q", key, r.env, envOf[key])
		}
	}
	for key := range doc {
		if _, ok := code[key]; !ok {
			t.Errorf("%s documents %s, which the configuration does not have", referenceDoc, key)
		}
	}
	for _, secret := range []string{"NARAD_ADMIN_PASSWORD", "NARAD_CLUSTER_SECRET", "NARAD_CLUSTER_SECRET_PREVIOUS"} {
		if !strings.Contains(string(raw), "| `"+secret+"` |") {
			t.Errorf("the environment-only %s is not in %s", secret, referenceDoc)
		}
	}
}

// collectKeys walks the config's JSON shape: a section is a struct, every
// other field a key named "section.key".
func collectKeys(v reflect.Value, prefix string, out map[string]reflect.Value) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name := f.Tag.Get("json")
		if name == "" || name == "-" {
			continue
		}
		if prefix != "" {
			name = prefix + "." + name
		}
		if f.Type.Kind() == reflect.Struct {
			collectKeys(v.Field(i), name, out)
			continue
		}
		out[name] = v.Field(i)
	}
}
