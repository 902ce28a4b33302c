package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// staleCopySweepWithin bounds how long after the last move every former
// owner's copy is gone: the sweep runs every 30 runner ticks (30 s), and
// a pass may start just before a move flips.
const staleCopySweepWithin = 100 * time.Second

// waitDisksMatchOwners waits until every node's disk holds a directory
// only for the partitions of topic it owns (internals.md §11.6: each
// former owner's stale-copy sweep reclaimed its copy), and fails on any
// copy set aside for an operator: after clean moves nothing is.
func waitDisksMatchOwners(t *testing.T, c *httpclient.Client, topic string, nodes []*node) {
	t.Helper()
	deadline := time.Now().Add(staleCopySweepWithin)
	for {
		extra, aside, err := disksBeyondOwners(c, topic, nodes)
		if len(aside) > 0 {
			t.Fatalf("copies set aside after clean moves: %v", aside)
		}
		if err == nil && len(extra) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition copies on nodes that do not own them after %v: %v (%v)", staleCopySweepWithin, extra, err)
		}
		time.Sleep(time.Second) // waiting for the sweeps, bounded by the deadline
	}
}

// disksBeyondOwners lists the partition directories of topic on nodes
// that do not own them and the staging left by moves (every move that
// ended flipped its staging in or removed it), and apart the quarantined
// copies, as "nI/pNNNNN" or "nI/.moves/NAME".
func disksBeyondOwners(c *httpclient.Client, topic string, nodes []*node) (extra, aside []string, err error) {
	tp, err := c.Topic(context.Background(), topic)
	if err != nil {
		return nil, nil, err
	}
	owner := map[string]string{}
	for _, s := range tp.PartitionStats {
		owner[fmt.Sprintf("p%05d", s.Index)] = s.OwnerNode
	}
	for i, n := range nodes {
		if n == nil {
			continue
		}
		id := fmt.Sprintf("n%d", i+1)
		staged, err := os.ReadDir(filepath.Join(n.dataDir, ".moves"))
		if err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		}
		for _, e := range staged {
			extra = append(extra, id+"/.moves/"+e.Name())
		}
		entries, err := os.ReadDir(filepath.Join(n.dataDir, "topics", topic))
		if err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		}
		for _, e := range entries {
			switch name := e.Name(); {
			case strings.Contains(name, ".quarantine"):
				aside = append(aside, id+"/"+name)
			case strings.HasPrefix(name, "p") && e.IsDir() && owner[name] != id:
				extra = append(extra, id+"/"+name)
			}
		}
	}
	slices.Sort(extra)
	return extra, aside, nil
}
