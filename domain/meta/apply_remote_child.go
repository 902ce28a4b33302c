package meta

import (
	"slices"
	"strings"
)

func (e *AttachRemoteChild) apply(t *tx, env Envelope) (Result, error) {
	parent, res, err := t.remoteParent(e)
	if err != nil || !res.OK() {
		return res, err
	}
	if res, err := t.remoteTarget(e); err != nil || !res.OK() {
		return res, err
	}
	if res, err := t.createTopic(CreateTopic{Name: e.Child, ID: e.ChildID}, env.AtSeconds()); err != nil || !res.OK() {
		return res, err
	}
	if res, err := t.reconcileSchemas(parent.Name, e.Child); err != nil || !res.OK() {
		return res, err
	}
	t.putTopic(Topic{
		Name: e.Child, ID: e.ChildID, CreatedAt: env.AtSeconds(),
		Parent: parent.Name, AttachEpoch: e.Epoch, FanoutDelayMs: e.DelayMs, AttachOffsets: e.Offsets,
		Remote: &RemoteLink{Name: e.Remote, RemoteID: e.RemoteID, Topic: e.RemoteTopic, TargetID: e.TargetID,
			From: e.From, Lanes: e.Lanes, CreatedBy: env.Actor},
	})
	parent.Children = append(parent.Children, e.Child)
	t.putTopic(parent)
	return okResult(), nil
}

// remoteParent reads the parent and checks what a remote child needs of it:
// the incarnation, its role, room for one more child and a retention that
// gives the link time to recover (0, or at least 24 h and the delay + 1 h).
func (t *tx) remoteParent(e *AttachRemoteChild) (Topic, Result, error) {
	parent, found, err := t.topic(e.Parent)
	if err != nil || !found {
		return parent, refuse(CodeNotFound, "parent %q not found", e.Parent), err
	}
	switch {
	case e.ParentID != "" && parent.ID != e.ParentID:
		return parent, refuse(CodeConflict, "parent %q is incarnation %q, not %q", e.Parent, parent.ID, e.ParentID), nil
	case parent.Parent != "":
		return parent, refuse(CodeRefused, "fan-out role conflict: %q is a child of %q", e.Parent, parent.Parent), nil
	case len(parent.Children) >= ChildrenMaxCount:
		return parent, refuse(CodeRefused, "parent %q has %d children", e.Parent, ChildrenMaxCount), nil
	case int32(len(e.Offsets)) > parent.Partitions:
		return parent, refuse(CodeRefused, "%d attach offsets for %d parent partitions", len(e.Offsets), parent.Partitions), nil
	case parent.RetentionMs != 0 && parent.RetentionMs < RemoteParentRetentionMinMs:
		return parent, refuse(CodeRefused, "retention %d ms of %q is below the %d ms a parent of remote children keeps", parent.RetentionMs, e.Parent, RemoteParentRetentionMinMs), nil
	case e.DelayMs > 0 && parent.RetentionMs != 0 && parent.RetentionMs < e.DelayMs+RetentionFloorMs:
		return parent, refuse(CodeRefused, "delay %d ms exceeds what retention %d ms of %q can buffer", e.DelayMs, parent.RetentionMs, e.Parent), nil
	}
	stubs, err := t.remoteChildren(parent)
	if err != nil {
		return parent, Result{}, err
	}
	if len(stubs) >= RemoteChildrenMaxCount {
		return parent, refuse(CodeRefused, "parent %q has %d remote children", e.Parent, RemoteChildrenMaxCount), nil
	}
	return parent, okResult(), nil
}

// remoteChildren returns the stubs among parent's children.
func (t *tx) remoteChildren(parent Topic) ([]Topic, error) {
	var out []Topic
	for _, name := range parent.Children {
		child, found, err := t.topic(name)
		if err != nil {
			return nil, err
		}
		if found && child.IsRemoteStub() {
			out = append(out, child)
		}
	}
	return out, nil
}

// remoteTarget checks the remote incarnation and that no other link of this
// cluster ships to the same topic at the same host and port.
func (t *tx) remoteTarget(e *AttachRemoteChild) (Result, error) {
	remote, found, err := ReadRemote(t, e.Remote)
	if err != nil || !found {
		return refuse(CodeNotFound, "remote %q not found", e.Remote), err
	}
	if remote.ID != e.RemoteID {
		return refuse(CodeConflict, "remote %q was recreated", e.Remote), nil
	}
	want := remoteEndpoint(remote.URL)
	links, err := Links(t)
	if err != nil {
		return Result{}, err
	}
	for _, l := range links {
		if l.Remote == nil || l.Remote.Topic != e.RemoteTopic {
			continue
		}
		other, found, err := ReadRemote(t, l.Remote.Name)
		if err != nil {
			return Result{}, err
		}
		if found && other.ID == l.Remote.RemoteID && remoteEndpoint(other.URL) == want {
			return refuse(CodeExists, "%q already links to topic %q at %s", l.Child, e.RemoteTopic, want), nil
		}
	}
	return okResult(), nil
}

// remoteEndpoint returns host:port of a canonical remote URL
// (https://host[:port][/path], lowercased, default port omitted).
func remoteEndpoint(url string) string {
	hostPort, _, _ := strings.Cut(strings.TrimPrefix(url, "https://"), "/")
	if i := strings.LastIndexByte(hostPort, ':'); i < 0 || i < strings.LastIndexByte(hostPort, ']') {
		return hostPort + ":" + remoteDefaultPort
	}
	return hostPort
}

func (e *SetRemoteChildState) apply(t *tx, env Envelope) (Result, error) {
	parent, stub, res, err := t.remoteStub(e.Parent, e.Child, e.ChildID)
	if err != nil || !res.OK() {
		return res, err
	}
	link := *stub.Remote
	switch e.Op {
	case RemoteOpPause:
		if !link.Paused {
			link.Paused, link.PausedBy, link.PausedAtMs = true, env.Actor, env.AtMs
		}
		link.PauseReason = e.Reason
	case RemoteOpResume, RemoteOpAcceptTarget:
		link.Paused, link.PauseReason, link.PausedBy, link.PausedAtMs = false, "", "", 0
		if e.Op == RemoteOpAcceptTarget {
			link.TargetID = e.TargetID
		}
	case RemoteOpSkip:
		if e.Partition >= parent.Partitions {
			return refuse(CodeRefused, "partition %d out of range for %d parent partitions", e.Partition, parent.Partitions), nil
		}
		link.Skip = withSkipped(link.Skip, e.Partition, e.Offset)
	}
	stub.Remote = &link
	t.putTopic(stub)
	return okResult(), nil
}

// remoteStub reads the stub child of parent, incarnation id.
func (t *tx) remoteStub(parentName, childName, id string) (Topic, Topic, Result, error) {
	parent, found, err := t.topic(parentName)
	if err != nil || !found {
		return Topic{}, Topic{}, refuse(CodeNotFound, "parent %q not found", parentName), err
	}
	stub, found, err := t.topic(childName)
	if err != nil || !found || !stub.IsRemoteStub() || stub.Parent != parentName {
		return parent, stub, refuse(CodeNotFound, "%q has no remote child %q", parentName, childName), err
	}
	if stub.ID != id {
		return parent, stub, refuse(CodeConflict, "remote child %q is incarnation %q, not %q", childName, stub.ID, id), nil
	}
	return parent, stub, okResult(), nil
}

// withSkipped returns skip with offset added to partition's ascending list
// (once), keeping the newest RemoteSkipMaxOffsets. It never changes skip's
// backing arrays: the caller's record stays as read.
func withSkipped(skip []PartitionSkip, partition int32, offset int64) []PartitionSkip {
	out := slices.Clone(skip)
	i, found := slices.BinarySearchFunc(out, partition, func(s PartitionSkip, p int32) int { return int(s.Partition) - int(p) })
	if !found {
		out = slices.Insert(out, i, PartitionSkip{Partition: partition})
	}
	offsets := slices.Clone(out[i].Offsets)
	if j, dup := slices.BinarySearch(offsets, offset); !dup {
		offsets = slices.Insert(offsets, j, offset)
	}
	if n := len(offsets); n > RemoteSkipMaxOffsets {
		offsets = offsets[n-RemoteSkipMaxOffsets:]
	}
	out[i].Offsets = offsets
	return out
}

// dropStub deletes a remote child's stub and every row stored under its
// name; the caller updates the parent's children.
func (t *tx) dropStub(stub Topic) error {
	if err := t.dropTopicRows(stub.Name); err != nil {
		return err
	}
	t.del(topicKey(stub.Name))
	t.del(topicFoldKey(stub.Name))
	return nil
}
