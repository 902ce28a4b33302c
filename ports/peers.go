package ports

import (
	"context"

	"github.com/narad/narad/domain"
)

// CommitRequest is a batch of records for one partition of one topic
// incarnation, to be committed durably by the partition's owner.
type CommitRequest struct {
	Topic     string
	TopicID   domain.TopicID
	Partition int32
	Records   []domain.Record
}

// PeerCommitter carries commits to other nodes (the node RPC of the cluster
// issue). Safe for concurrent use.
type PeerCommitter interface {
	// CommitBatch asks node to commit req durably and returns the offset of
	// its first record. Errors fall in the classes of PeerForwarder: a
	// transport failure wrapping domain.ErrNotSent (nothing was committed)
	// or domain.ErrNoAnswer (the outcome is unknown), or the owner's
	// refusal: domain.ErrNotOwner (the peer does not own the partition),
	// domain.ErrTopicNotFound (the peer has no such incarnation),
	// domain.ErrUnavailable, ... Any error but ErrTopicNotFound may leave
	// records to commit: the caller keeps them and retries (a retry may
	// duplicate, never lose). A node that falls silent (sends nothing at
	// all, as when cut off the network) fails the call within a few
	// seconds, as domain.ErrNoAnswer once the request left, whatever ctx's
	// deadline (internals.md §10.1), so a commit's 30 s budget is not how
	// long a silent owner holds its records.
	CommitBatch(ctx context.Context, node string, req CommitRequest) (first int64, err error)
	// CommitBatches asks node to commit several batches, independently of
	// one another, in as few round trips as node takes (one, where it
	// knows how). outcomes[i] answers reqs[i] exactly as CommitBatch would
	// have answered reqs[i] alone: a transport failure is repeated in
	// every outcome it cut short. reqs must not be empty; the caller keeps
	// its slices, which are only read during the call.
	CommitBatches(ctx context.Context, node string, reqs []CommitRequest) (outcomes []CommitOutcome)
}

// CommitOutcome is one batch's answer within PeerCommitter.CommitBatches:
// the offset of its first record, or the error CommitBatch would return.
type CommitOutcome struct {
	First int64
	Err   error
}
