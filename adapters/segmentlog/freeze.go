package segmentlog

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// freezeTokenBytes sizes a freeze token (16 hex characters).
const freezeTokenBytes = 8

// freeze is a partition's move freeze (internals.md §11.3 step 3): while it
// holds, commits are refused with nothing appended.
type freeze struct {
	mu    sync.Mutex
	token string
	until time.Time
	// untilNs mirrors until (unix nanoseconds, 0 when no freeze was ever
	// set or the last one was cleared) for the lock-free check of every
	// consume's Bounds.
	untilNs atomic.Int64
}

// holdsAt reports, without the lock, whether a freeze holds at now; it
// reads the clock only while a freeze was set.
func (f *freeze) holdsAt(now func() time.Time) bool {
	u := f.untilNs.Load()
	return u != 0 && now().UnixNano() < u
}

// clear ends any freeze (an install replaced the partition).
func (f *freeze) clear() {
	f.mu.Lock()
	f.token = ""
	f.untilNs.Store(0)
	f.mu.Unlock()
}

// active reports whether the freeze holds at now.
func (f *freeze) active(now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.token != "" && now.Before(f.until)
}

// errFrozen answers a commit to a frozen partition: retryable, nothing
// appended; the dispatcher keeps the records and, past its reroute grace,
// sends them to a sibling partition.
func errFrozen(ref domain.PartitionRef) error {
	return domain.Refuse(domain.ErrUnavailable, fmt.Sprintf("%s/%d is being moved to another node; retry", ref.Topic, ref.Partition))
}

// Freeze stops commits to ref for ttl and lists what a move copies, read
// under the partition's produce lock after the freeze took hold: a commit
// in flight finishes first and is in the listing, any later one is
// refused. With token empty it starts a freeze and returns its token; with
// the token of the freeze that holds it prolongs it (the re-arm and the
// fence of internals.md §11.3 steps 4-5), and any other token, or a freeze
// that lapsed, is refused with domain.ErrConflict: commits may have landed
// since.
func (s *Store) Freeze(ref domain.PartitionRef, token string, ttl time.Duration) (string, ports.TransferListing, error) {
	if err := validateRef(ref); err != nil {
		return "", ports.TransferListing{}, err
	}
	sl := s.slotFor(ref)
	now := s.opts.Now()
	f := &sl.freeze
	f.mu.Lock()
	switch {
	case token == "":
		b := make([]byte, freezeTokenBytes)
		_, _ = rand.Read(b) // crypto/rand never fails on Linux
		f.token = hex.EncodeToString(b)
	case token != f.token || !now.Before(f.until):
		f.mu.Unlock()
		return "", ports.TransferListing{}, domain.Refuse(domain.ErrConflict, "the freeze of this move is no longer active: commits may have landed since")
	}
	f.until = now.Add(ttl)
	f.untilNs.Store(f.until.UnixNano())
	token = f.token
	f.mu.Unlock()

	sl.produce.Lock()
	defer sl.produce.Unlock()
	l, err := s.TransferListing(ref)
	if err != nil {
		return "", ports.TransferListing{}, err
	}
	return token, l, nil
}

// sideFiles lists the files beside the segments that move with a
// partition (internals.md §11.4): the consumer position, the receive
// counts, the fan-out cursors and the scheduled records' bucket files,
// with their sizes now.
func (s *Store) sideFiles(dir string) ([]ports.TransferFile, error) {
	names, err := s.opts.FS.List(dir)
	if err != nil {
		return nil, fmt.Errorf("segmentlog: list %s: %w", dir, err)
	}
	var out []ports.TransferFile
	for _, name := range names {
		if !isSideFile(name) {
			continue
		}
		fi, err := s.opts.FS.Stat(filepath.Join(dir, name))
		if err != nil {
			continue // removed meanwhile: nothing to copy
		}
		out = append(out, ports.TransferFile{Name: name, Size: fi.Size()})
	}
	return out, nil
}

// A source reads a side file that fails its check up to sideReadAttempts
// times, sideReadRetryPause apart, before refusing to ship it.
const (
	sideReadAttempts   = 3
	sideReadRetryPause = 5 * time.Millisecond
)

// Side files a move copies. They belong to adapters/offsetstore,
// adapters/receivelog and adapters/cursorfile; this package only carries
// them.
const (
	sideConsumerOffset   = "consumer.offset"
	sideConsumerAhead    = "consumer.ahead"
	sideConsumerReceives = "consumer.receives" // adapters/receivelog: receive counts (dead letters)
	sideCursorPrefix     = "fanout-"
	sideCursorSuffix     = ".offset"
)

// isSideFile reports whether name is a side file a move copies.
func isSideFile(name string) bool {
	switch name {
	case sideConsumerOffset, sideConsumerAhead, sideConsumerReceives:
		return true
	}
	if isBucketName(name) {
		return true
	}
	child, ok := strings.CutPrefix(name, sideCursorPrefix)
	if !ok {
		return false
	}
	child, ok = strings.CutSuffix(child, sideCursorSuffix)
	return ok && domain.ValidateTopicName(child) == nil
}

// isTransferName reports whether a move may read or write name.
func isTransferName(name string) bool {
	_, seg := parseSegmentName(name)
	return seg || isSideFile(name)
}
