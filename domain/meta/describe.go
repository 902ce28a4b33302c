package meta

import (
	"fmt"
	"strings"
)

// Describe prints every view in a stable, line-per-record text form: topics
// (with their schemas and rows), members, tombstones, users, remotes and
// counters. Golden tests compare it; operators can diff two replicas with it.
func Describe(r KVReader) (string, error) {
	var b strings.Builder
	steps := []func(KVReader, *strings.Builder) error{describeTopics, describeMembers, describeUsers, describeRemotes, describeStats}
	for _, step := range steps {
		if err := step(r, &b); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func describeTopics(r KVReader, b *strings.Builder) error {
	topics, err := ListTopics(r, "", 0)
	if err != nil {
		return err
	}
	for _, t := range topics {
		fmt.Fprintf(b, "topic %s id=%s partitions=%d retention_ms=%d visibility_ms=%d in_flight=%d acked_ahead=%d created_at=%d owner=%q role=%s",
			t.Name, t.ID, t.Partitions, t.RetentionMs, t.VisibilityTimeoutMs, t.MaxInFlight, t.MaxAckedAhead, t.CreatedAt, t.Owner, t.Role())
		if len(t.Children) > 0 {
			fmt.Fprintf(b, " children=%v", t.Children)
		}
		if t.Parent != "" {
			fmt.Fprintf(b, " parent=%s epoch=%s delay_ms=%d offsets=%v", t.Parent, t.AttachEpoch, t.FanoutDelayMs, t.AttachOffsets)
		}
		if t.Remote != nil {
			describeRemoteLink(*t.Remote, b)
		}
		if r := t.Redelivery; r != nil {
			fmt.Fprintf(b, " redelivery=%d*%g^n<=%d jitter=%g", r.InitialMs, r.Multiplier, r.MaxMs, r.Jitter)
		}
		if d := t.DeadLetter; d != nil {
			fmt.Fprintf(b, " dead_letter=%s@%d", d.Topic, d.MaxReceiveCount)
		}
		if j := t.Redrive; j != nil {
			fmt.Fprintf(b, " redrive=%s/%s to=%q rate=%d max=%d moved=%d skipped=%d runs=%d by=%q at=%d..%d error=%q",
				j.ID, j.State, j.To, j.RatePerSec, j.MaxMessages, j.Moved, j.Skipped, j.Runs, j.By, j.StartedAtMs, j.UpdatedAtMs, j.Error)
		}
		b.WriteByte('\n')
		if err := describeRows(r, t.Name, b); err != nil {
			return err
		}
	}
	return describeOrphanRows(r, topics, b)
}

func describeRemoteLink(l RemoteLink, b *strings.Builder) {
	fmt.Fprintf(b, " remote=%s/%s remote_id=%s target_id=%q from=%s lanes=%d created_by=%q",
		l.Name, l.Topic, l.RemoteID, l.TargetID, l.From, l.Lanes, l.CreatedBy)
	if l.Paused {
		fmt.Fprintf(b, " paused reason=%q by=%q at_ms=%d", l.PauseReason, l.PausedBy, l.PausedAtMs)
	}
	for _, s := range l.Skip {
		fmt.Fprintf(b, " skip/%d=%v", s.Partition, s.Offsets)
	}
}

func describeRows(r KVReader, topic string, b *strings.Builder) error {
	schemas, err := Schemas(r, topic)
	if err != nil {
		return err
	}
	for _, s := range schemas {
		fmt.Fprintf(b, "  schema v%d %s\n", s.Version, s.Schema)
	}
	rows, err := Assignments(r, topic)
	if err != nil {
		return err
	}
	for _, a := range rows {
		describeRow(a, "  ", b)
	}
	return nil
}

func describeRow(a Assignment, indent string, b *strings.Builder) {
	fmt.Fprintf(b, "%sassignment %s/%d id=%s owner=%s", indent, a.Topic, a.Partition, a.TopicID, a.Owner)
	if a.Target != "" {
		fmt.Fprintf(b, " target=%s", a.Target)
	}
	b.WriteByte('\n')
}

// describeOrphanRows prints rows whose topic does not exist.
func describeOrphanRows(r KVReader, topics []Topic, b *strings.Builder) error {
	live := make(map[string]bool, len(topics))
	for _, t := range topics {
		live[t.Name] = true
	}
	rows, err := AllAssignments(r)
	if err != nil {
		return err
	}
	for _, a := range rows {
		if !live[a.Topic] {
			describeRow(a, "orphan ", b)
		}
	}
	return nil
}

func describeMembers(r KVReader, b *strings.Builder) error {
	members, err := Members(r)
	if err != nil {
		return err
	}
	for _, m := range members {
		fmt.Fprintf(b, "member %s addr=%s cluster_addr=%s status=%s heartbeat=%d draining=%t build=%q entry_types=%d\n",
			m.ID, m.Addr, m.ClusterAddr, m.Status, m.LastHeartbeat, m.Draining, m.Build, m.EntryTypes)
	}
	tombs, err := Tombstones(r)
	if err != nil {
		return err
	}
	for _, t := range tombs {
		fmt.Fprintf(b, "tombstone %s at=%d\n", t.ID, t.At)
	}
	return nil
}

func describeUsers(r KVReader, b *strings.Builder) error {
	users, err := Users(r)
	if err != nil {
		return err
	}
	for _, u := range users {
		fmt.Fprintf(b, "user %s hash=%q root=%t grants=%s created_at_ms=%d updated_at_ms=%d\n",
			u.Username, u.PasswordHash, u.Root, grantsText(u.Grants), u.CreatedAtMs, u.UpdatedAtMs)
	}
	return nil
}

func grantsText(gs []Grant) string {
	parts := make([]string, 0, len(gs))
	for _, g := range gs {
		parts = append(parts, g.Action+strings.Join(append([]string{""}, g.Patterns...), ":"))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func describeRemotes(r KVReader, b *strings.Builder) error {
	remotes, err := Remotes(r)
	if err != nil {
		return err
	}
	for _, x := range remotes {
		fmt.Fprintf(b, "remote %s id=%s url=%s user=%s key=%s fingerprint=%s ca_bytes=%d cred_v=%d rev=%d limits=%+v created=%d/%s set=%d/%s\n",
			x.Name, x.ID, x.URL, x.Username, x.KeyVersion, x.Fingerprint, len(x.CAPEM), x.CredentialVersion, x.Revision,
			x.Limits, x.CreatedAtMs, x.CreatedBy, x.SetAtMs, x.SetBy)
	}
	return nil
}

func describeStats(r KVReader, b *strings.Builder) error {
	for _, prefix := range []string{"stat/", prefixSeals} {
		err := r.Scan([]byte(prefix), prefixEnd([]byte(prefix)), func(k, v []byte) (bool, error) {
			if string(k) == keyRemoteSalt {
				fmt.Fprintf(b, "%s (%d bytes)\n", k, len(v))
			} else {
				fmt.Fprintf(b, "%s = %s\n", k, v)
			}
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
