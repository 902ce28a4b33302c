package metastore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lni/dragonboat/v4"
	"go.uber.org/zap"
)

// A replica that entered its shard by joining must start as a non-voter on
// every restart until a local snapshot shows it as a voter: Raft replays
// the log after the latest snapshot, and replaying the entry that staged it
// panics in a replica started as a voter (dragonboat refuses to stage a
// voter). A replica started as a non-voter is promoted in place when the
// replay (or the live log) reaches its promotion. So the role file beside
// the Raft directory says how to start:
//
//	absent      initial member (bootstrapped): start as a voter
//	non-voter   joined and not yet promoted-and-snapshotted: start as a non-voter
//	voter       promoted, and a local snapshot taken after the promotion
//
// Once a replica started as a non-voter sees itself a voter, it takes a
// snapshot (so no later replay meets its staging) and only then records
// "voter". The file is written crash-safely: a crash before the record
// leaves "non-voter", which is always safe to start with before the
// snapshot, and a restart takes the snapshot again.

const (
	roleFileName = "replica-role"
	roleNonVoter = "non-voter"
	roleVoter    = "voter"
)

func (h *Host) rolePath() string { return filepath.Join(h.cfg.DataDir, roleFileName) }

// readRole returns the recorded role, "" when none was recorded.
func readRole(path string) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("metastore: read replica role: %w", err)
	}
	role := strings.TrimSpace(string(b))
	if role != roleNonVoter && role != roleVoter {
		return "", fmt.Errorf("metastore: replica role file %s holds %q: %w", path, role, ErrBadConfig)
	}
	return role, nil
}

// writeRole records role crash-safely.
func writeRole(path, role string) error {
	tmp := path + tmpSuffix
	if err := writeSynced(tmp, []byte(role+"\n")); err != nil {
		return fmt.Errorf("metastore: write replica role: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("metastore: install replica role: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("metastore: sync replica role: %w", err)
	}
	return nil
}

// startAsNonVoter decides the replica's starting role from the plan and
// the role file, recording "non-voter" before a join-only replica starts.
// A joiner started as a voter (cfg.JoinAsVoter: an initial member whose
// peers are configured already) records "non-voter" too: should the
// cluster stage it after all (an id its configuration lacks), the voter
// replica stops on the staging, and its restart as a non-voter applies it.
func (h *Host) startAsNonVoter(plan startPlan, cfg StoreConfig) (bool, error) {
	if plan.join {
		return !cfg.JoinAsVoter, writeRole(h.rolePath(), roleNonVoter)
	}
	role, err := readRole(h.rolePath())
	if err != nil {
		return false, err
	}
	return cfg.NonVoter || (plan.kind == "restart" && role == roleNonVoter), nil
}

// settleRole runs on the probe loop while the replica started as a
// non-voter, or joined as a voter: once the shard lists it as a voter, it snapshots and records
// "voter" (see the top of this file). It reports whether it is done.
func (s *Store) settleRole(ctx context.Context) bool {
	info := s.host.nh.GetNodeHostInfo(dragonboat.NodeHostInfoOption{SkipLogInfo: true})
	if info == nil || !s.promoted(info.ShardInfoList) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, membershipTimeout)
	defer cancel()
	index, err := s.host.nh.SyncRequestSnapshot(ctx, s.shardID, dragonboat.DefaultSnapshotOption)
	if err != nil {
		s.log.Warn("promoted to voter; snapshot before recording it failed, will retry", zap.Error(err))
		return false
	}
	if err := writeRole(s.host.rolePath(), roleVoter); err != nil {
		s.log.Error("promoted to voter; recording it failed, will retry", zap.Error(err))
		return false
	}
	s.log.Info("promoted to voter; role recorded after a snapshot", zap.Uint64("snapshot_index", index))
	return true
}

// promoted reports whether the shard's configuration lists this replica as
// a voter.
func (s *Store) promoted(shards []dragonboat.ShardInfo) bool {
	for _, si := range shards {
		if si.ShardID != s.shardID || si.Pending || si.IsNonVoting {
			continue
		}
		if _, ok := si.Replicas[s.replicaID]; ok {
			return true
		}
	}
	return false
}
