package fake_test

import (
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports/porttest"
)

// ensure that the fake keeps the FanoutCursors contract the cursor files
// keep.
func TestFanoutCursorsConformance(t *testing.T) {
	porttest.FanoutCursors(t, func(t *testing.T) porttest.FanoutCursorsFixture {
		f := fake.NewFanoutCursors()
		return porttest.FanoutCursorsFixture{
			Cursors:   f,
			MakeDir:   func(_ *testing.T, ref domain.PartitionRef) { f.MakeDir(ref) },
			RemoveDir: func(_ *testing.T, ref domain.PartitionRef) { f.RemoveDir(ref) },
		}
	})
}
