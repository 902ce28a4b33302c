package config

import "slices"

// validateUnbuilt refuses a value other than the default for the keys this
// build parses (so a configuration file written for the original Narad
// still loads) but does not act on yet: the Raft snapshot timer, the cold
// retention walk. Accepting them
// silently would let an operator believe a setting took effect.
func (c Config) validateUnbuilt(bad func(string, ...any)) {
	d := Default()
	unbuilt := map[string]bool{
		"storage.cold_retention_walk_ms": c.Storage.ColdRetentionWalkMs != d.Storage.ColdRetentionWalkMs,
		"cluster.raft_snapshot_interval": c.Cluster.RaftSnapshotInterval != d.Cluster.RaftSnapshotInterval,
		"cluster.raft_trailing_logs":     c.Cluster.RaftTrailingLogs != d.Cluster.RaftTrailingLogs,
	}
	keys := make([]string, 0, len(unbuilt))
	for k, set := range unbuilt {
		if set {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		bad("%s is not supported by this build yet; remove it or leave it at its default", k)
	}
}
