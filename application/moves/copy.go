package moves

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// copier copies one partition from its source node into this node's
// staging, file by file, chunk by chunk.
type copier struct {
	peers ports.PeerTransfer
	inst  ports.PartitionInstaller
	src   string
	ref   domain.PartitionRef
	// copied observes the bytes of each chunk written (narad_moves_bytes_total).
	copied func(bytes int64)
}

// segments brings the staged segments up to listing l and drops staged
// files l no longer lists (except the side files it names), returning the
// segment bytes copied. Segments only grow below the source's high
// watermark, so what is staged is a prefix of what is listed; a staged
// file longer than listed (a segment deleted and named again) is copied
// again from its start.
func (c *copier) segments(ctx context.Context, l ports.TransferListing) (int64, error) {
	keep := make(map[string]bool, len(l.Segments)+len(l.Side))
	for _, f := range l.Segments {
		keep[f.Name] = true
	}
	for _, f := range l.Side {
		keep[f.Name] = true
	}
	if err := c.inst.StagingKeep(c.ref, keep); err != nil {
		return 0, err
	}
	var copied int64
	for _, f := range l.Segments {
		have, err := c.inst.StagingSize(c.ref, f.Name)
		if err != nil {
			return copied, err
		}
		if have > f.Size {
			if err := c.inst.StagingTruncate(c.ref, f.Name, 0); err != nil {
				return copied, err
			}
			have = 0
		}
		n, err := c.file(ctx, f.Name, have, f.Size)
		copied += n
		if err != nil {
			return copied, err
		}
	}
	return copied, nil
}

// side copies every side file whole (they are rewritten in place). A
// file gone from the source meanwhile (a cursor of a dissolved link) is
// staged empty: an empty position file reads as none.
func (c *copier) side(ctx context.Context, files []ports.TransferFile) error {
	for _, f := range files {
		if err := c.inst.StagingTruncate(c.ref, f.Name, 0); err != nil {
			return err
		}
		if _, err := c.file(ctx, f.Name, 0, f.Size); err != nil && !errors.Is(err, domain.ErrOffsetGone) {
			return err
		}
	}
	return nil
}

// file copies bytes [from, to) of name.
func (c *copier) file(ctx context.Context, name string, from, to int64) (int64, error) {
	var copied int64
	for off := from; off < to; {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		b, err := c.peers.FetchTransferChunk(cctx, c.src, c.ref, name, off, int(min(chunkBytes, to-off)))
		cancel()
		if err != nil {
			return copied, fmt.Errorf("copy %s of %s from %s at %d: %w", name, c.ref, c.src, off, err)
		}
		if len(b) == 0 {
			return copied, fmt.Errorf("copy %s of %s from %s: ends at %d, listed to %d: %w", name, c.ref, c.src, off, to, domain.ErrUnavailable)
		}
		if err := c.inst.StagingWrite(c.ref, name, off, b); err != nil {
			return copied, err
		}
		c.copied(int64(len(b)))
		off += int64(len(b))
		copied += int64(len(b))
	}
	return copied, nil
}
