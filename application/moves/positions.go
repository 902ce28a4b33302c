package moves

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Positions are the stores of what moves with a partition besides its
// segments: the consumer position and the fan-out cursors.
type Positions struct {
	Offsets ports.OffsetStore
	Cursors ports.FanoutCursors
}

// clamp lowers an installed copy's positions to its boundary hwm
// (internals.md §11.4): the consumer frontier to at most hwm-1 (with a
// warning: the source's frontier passed what was copied), acked-ahead
// offsets to those below hwm, fan-out cursors to at most hwm. Then it
// forgets the partition, so the owner's consume loads what it wrote.
func (p Positions) clamp(ref domain.PartitionRef, hwm int64, log *slog.Logger) error {
	if p.Offsets != nil {
		if err := p.clampOffsets(ref, hwm, log); err != nil {
			return err
		}
	}
	if p.Cursors == nil {
		return nil
	}
	children, err := p.Cursors.Children(ref)
	if err != nil {
		return fmt.Errorf("cursors of %s: %w", ref, err)
	}
	for _, child := range children {
		c, ok, err := p.Cursors.Load(ref, child)
		if err != nil || !ok || c.NextOffset <= hwm {
			continue // a corrupt cursor replays from its attach point anyway
		}
		c.NextOffset = hwm
		if err := p.Cursors.Store(ref, child, c); err != nil {
			return fmt.Errorf("lower the cursor of %s → %s to %d: %w", ref, child, hwm, err)
		}
	}
	return nil
}

func (p Positions) clampOffsets(ref domain.PartitionRef, hwm int64, log *slog.Logger) error {
	defer p.Offsets.Forget(ref)
	o, err := p.Offsets.Load(ref)
	if err != nil {
		return fmt.Errorf("consumer position of %s: %w", ref, err)
	}
	ahead := slices.DeleteFunc(slices.Clone(o.AckedAhead), func(off int64) bool { return off >= hwm })
	if o.Committed <= hwm-1 && len(ahead) == len(o.AckedAhead) {
		return nil
	}
	if o.Committed > hwm-1 {
		log.Warn("a moved partition's consumer frontier was past its copied boundary: lowered",
			slog.Int64("frontier", o.Committed), slog.Int64("boundary", hwm))
	}
	o = ports.ConsumerOffsets{Committed: min(o.Committed, hwm-1), AckedAhead: ahead}
	if err := p.Offsets.Write(ref, o); err != nil {
		return fmt.Errorf("lower the consumer position of %s: %w", ref, err)
	}
	if err := p.Offsets.Sync(ref); err != nil {
		return fmt.Errorf("lower the consumer position of %s: %w", ref, err)
	}
	if err := p.Offsets.Level(ref, o.Committed); err != nil {
		return fmt.Errorf("lower the consumer position of %s: %w", ref, err)
	}
	return nil
}
