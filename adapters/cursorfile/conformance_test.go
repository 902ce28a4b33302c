package cursorfile

import (
	"testing"

	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports/porttest"
)

// ensure that the cursor files keep the FanoutCursors contract, on the
// real filesystem and on the strict in-memory one.
func TestFanoutCursorsConformance(t *testing.T) {
	for name, fsys := range map[string]func(t *testing.T) (vfs.FS, string){
		"os":    func(t *testing.T) (vfs.FS, string) { return vfs.OS{}, t.TempDir() },
		"memfs": func(*testing.T) (vfs.FS, string) { return vfs.NewMem(), dataDir },
	} {
		t.Run(name, func(t *testing.T) {
			porttest.FanoutCursors(t, func(t *testing.T) porttest.FanoutCursorsFixture {
				fs, dir := fsys(t)
				s, err := New(Options{FS: fs, DataDir: dir})
				if err != nil {
					t.Fatal(err)
				}
				return porttest.FanoutCursorsFixture{
					Cursors: s,
					MakeDir: func(t *testing.T, ref domain.PartitionRef) { makePartitionDir(t, fs, dir, ref) },
					RemoveDir: func(t *testing.T, ref domain.PartitionRef) {
						if err := fs.RemoveAll(segmentlog.PartitionDir(dir, ref.Topic, ref.Partition)); err != nil {
							t.Fatal(err)
						}
					},
				}
			})
		})
	}
}
