package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Source says where the layers above the defaults come from.
type Source struct {
	// File is the JSON config file; empty for none.
	File string
	// Env looks up an environment variable (os.LookupEnv in production).
	Env func(string) (string, bool)
	// Flags maps setting keys ("http.addr") to flag values, applied last.
	Flags map[string]string
}

// Load builds and validates the configuration from defaults, file,
// environment and flags, in that order.
func Load(src Source) (Config, error) {
	cfg := Default()
	if src.File != "" {
		if err := loadFile(&cfg, src.File); err != nil {
			return Config{}, fmt.Errorf("config: load file: %w", err)
		}
	}
	if src.Env != nil {
		if err := applyEnv(&cfg, src.Env); err != nil {
			return Config{}, fmt.Errorf("config: environment: %w", err)
		}
	}
	if err := applyFlags(&cfg, src.Flags); err != nil {
		return Config{}, fmt.Errorf("config: flags: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "narad"
	}
	return h
}

// loadFile applies a strict JSON file: unknown keys anywhere are refused and
// named by their full key; storage keys outside the seven are internal.
func loadFile(cfg *Config, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sections map[string]json.RawMessage
	if err := json.Unmarshal(raw, &sections); err != nil {
		return fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	targets := sectionTargets(cfg)
	var errs []error
	for _, name := range sortedKeys(sections) {
		target, ok := targets[name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s is not a known setting", name))
			continue
		}
		if err := decodeSection(name, sections[name], target); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func sectionTargets(cfg *Config) map[string]any {
	return map[string]any{
		"http": &cfg.HTTP, "cluster": &cfg.Cluster, "storage": &cfg.Storage, "topic": &cfg.Topic,
		"fanout": &cfg.Fanout, "remotes": &cfg.Remotes, "log": &cfg.Log, "security": &cfg.Security,
	}
}

func decodeSection(name string, raw json.RawMessage, target any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("%s: want a JSON object: %w", name, err)
	}
	known := jsonFields(target)
	var errs []error
	for _, key := range sortedKeys(fields) {
		if _, ok := known[key]; ok {
			continue
		}
		if name == "storage" {
			errs = append(errs, fmt.Errorf("storage.%s is an internal setting and cannot be configured", key))
		} else {
			errs = append(errs, fmt.Errorf("%s.%s is not a known setting", name, key))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, key := range sortedKeys(fields) {
		if err := json.Unmarshal(fields[key], known[key].Addr().Interface()); err != nil {
			errs = append(errs, fmt.Errorf("%s.%s: %w", name, key, err))
		}
	}
	return errors.Join(errs...)
}

// jsonFields maps a struct's JSON keys to its addressable fields.
func jsonFields(target any) map[string]reflect.Value {
	v := reflect.ValueOf(target).Elem()
	out := map[string]reflect.Value{}
	for i := 0; i < v.NumField(); i++ {
		tag := strings.Split(v.Type().Field(i).Tag.Get("json"), ",")[0]
		if tag != "" && tag != "-" {
			out[tag] = v.Field(i)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// setValue parses text into the setting key ("http.addr") of cfg the way the
// environment and flags spell values: durations with units, ints, bools,
// comma lists, peers as id@host:port,...
func setValue(cfg *Config, key, text string) error {
	section, field, _ := strings.Cut(key, ".")
	target, ok := sectionTargets(cfg)[section]
	if !ok {
		return fmt.Errorf("%s is not a known setting", key)
	}
	fv, ok := jsonFields(target)[field]
	if !ok {
		return fmt.Errorf("%s is not a known setting", key)
	}
	js, err := textToJSON(fv, text)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(fv.Addr().Interface()); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func textToJSON(fv reflect.Value, text string) ([]byte, error) {
	switch fv.Interface().(type) {
	case string, Duration:
		return json.Marshal(text)
	case []string:
		return json.Marshal(splitList(text))
	case []Peer:
		return peersJSON(text)
	case []int:
		return []byte("[" + strings.Join(splitList(text), ",") + "]"), nil
	case bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %q", text)
		}
		return json.Marshal(b)
	}
	return []byte(text), nil // numbers and bools are spelled the same in JSON
}

func splitList(text string) []string {
	out := []string{}
	for _, s := range strings.Split(text, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func peersJSON(text string) ([]byte, error) {
	var peers []Peer
	for _, entry := range splitList(text) {
		id, addr, ok := strings.Cut(entry, "@")
		if !ok || id == "" || addr == "" {
			return nil, fmt.Errorf("malformed peer entry %q: want id@host:port", entry)
		}
		peers = append(peers, Peer{ID: id, Addr: addr})
	}
	return json.Marshal(peers)
}
