package partdir_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/partdir"
	"github.com/narad/narad/adapters/segmentlog"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

const (
	idA = domain.TopicID("00000000000000aa")
	idB = domain.TopicID("00000000000000bb")
)

func ref(topic string, id domain.TopicID, p int32) domain.PartitionRef {
	return domain.PartitionRef{Topic: topic, TopicID: id, Partition: p}
}

// ensure that the paths are segmentlog's on-disk layout.
func TestPaths(t *testing.T) {
	for p, want := range map[int32]string{0: "/data/topics/orders/p00000", 7: "/data/topics/orders/p00007", 123456: "/data/topics/orders/p123456"} {
		if got := partdir.Dir("/data", ref("orders", idA, p)); got != want {
			t.Errorf("Dir(%d) = %q, want %q", p, got, want)
		}
		if got, seg := partdir.Dir("/data", ref("orders", idA, p)), segmentlog.PartitionDir("/data", "orders", p); got != seg {
			t.Errorf("Dir(%d) = %q, segmentlog has %q", p, got, seg)
		}
	}
	if got := partdir.TopicDir("/data", "orders"); got != "/data/topics/orders" {
		t.Errorf("TopicDir = %q", got)
	}
	if got, seg := partdir.MarkerPath("/data", "orders"), segmentlog.MarkerPath("/data", "orders"); got != "/data/topics/orders/incarnation" || got != seg {
		t.Errorf("MarkerPath = %q, segmentlog has %q", got, seg)
	}
}

// ensure that ValidRef refuses bad names, partitions and ids as invalid records.
func TestValidRef(t *testing.T) {
	for _, r := range []domain.PartitionRef{ref("orders", idA, 0), ref("orders", "", 3)} {
		if err := partdir.ValidRef(r); err != nil {
			t.Errorf("ValidRef(%v) = %v", r, err)
		}
	}
	for _, r := range []domain.PartitionRef{ref("", idA, 0), ref("a/b", idA, 0), ref("orders", idA, -1), ref("orders", "xyz", 0)} {
		if err := partdir.ValidRef(r); !errors.Is(err, domain.ErrInvalidRecord) {
			t.Errorf("ValidRef(%v) = %v, want ErrInvalidRecord", r, err)
		}
	}
}

// ensure that Ours follows the directory and the topic's incarnation marker.
func TestOurs(t *testing.T) {
	mem := vfs.NewMem()
	r := ref("orders", idA, 2)
	check := func(name string, r domain.PartitionRef, want bool) {
		t.Helper()
		got, err := partdir.Ours(mem, "/data", r)
		if err != nil || got != want {
			t.Errorf("%s: Ours = %v, %v; want %v", name, got, err, want)
		}
	}
	check("no directory", r, false)
	check("no directory, legacy id", ref("orders", "", 2), false)
	if err := mem.MkdirAll(partdir.Dir("/data", r)); err != nil {
		t.Fatal(err)
	}
	check("marker missing", r, false)
	check("marker missing, legacy id", ref("orders", "", 2), true)
	if err := vfs.WriteFileAtomic(mem, partdir.MarkerPath("/data", "orders"), []byte(idA+"\n")); err != nil {
		t.Fatal(err)
	}
	check("marker matches", r, true)
	check("marker names another incarnation", ref("orders", idB, 2), false)
	check("legacy id", ref("orders", "", 2), true)
	check("other partition", ref("orders", idA, 3), false)
}

// ensure that Ours reports a failed stat or marker read rather than an answer.
func TestOursErrors(t *testing.T) {
	mem := vfs.NewMem()
	r := ref("orders", idA, 0)
	if err := mem.MkdirAll(partdir.Dir("/data", r)); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileAtomic(mem, partdir.MarkerPath("/data", "orders"), []byte(idA)); err != nil {
		t.Fatal(err)
	}
	faults := &vfs.Faults{}
	fsys := vfs.Inject(mem, faults.Hook)
	faults.FailNext(vfs.OpStat, "p00000")
	if _, err := partdir.Ours(fsys, "/data", r); err == nil || !strings.HasPrefix(err.Error(), "stat orders") {
		t.Errorf("failed stat: %v", err)
	}
	faults.FailNext(vfs.OpOpen, "incarnation")
	if _, err := partdir.Ours(fsys, "/data", r); err == nil || !strings.HasPrefix(err.Error(), "read incarnation marker of orders: ") {
		t.Errorf("failed marker read: %v", err)
	}
}
