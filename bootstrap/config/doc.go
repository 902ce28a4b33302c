// Package config loads a node's configuration (api.md §6): built-in defaults,
// then a strict JSON file, then NARAD_* environment variables, then flags;
// the whole result is validated before the node opens any data, every
// problem named by its setting and joined into one error.
package config
