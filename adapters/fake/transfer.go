package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var (
	_ ports.PeerTransfer       = (*TransferSource)(nil)
	_ ports.PartitionInstaller = (*Installer)(nil)
)

// TransferSource is a move's source node in memory: one partition's
// segments and side files, its high watermark and its freeze.
type TransferSource struct {
	mu       sync.Mutex
	hwm      int64
	segments map[string][]byte
	side     map[string][]byte
	token    string
	freezes  int
	marker   *ports.MoveMarker
	down     bool
	// OnFreeze, when set, runs after every successful freeze or re-arm
	// (tests use it to land a commit behind the copy).
	OnFreeze func(s *TransferSource)
}

// NewTransferSource returns a source holding nothing.
func NewTransferSource() *TransferSource {
	return &TransferSource{segments: map[string][]byte{}, side: map[string][]byte{}}
}

// Append adds b to segment name and raises the high watermark by records.
func (s *TransferSource) Append(name string, b []byte, records int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.segments[name] = append(s.segments[name], b...)
	s.hwm += records
}

// SetSide sets side file name.
func (s *TransferSource) SetSide(name string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.side[name] = slices.Clone(b)
}

// SetDown makes every call fail as a dead node's would (false: answer
// again).
func (s *TransferSource) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func (s *TransferSource) downErr() error {
	if s.down {
		return domain.Refuse(domain.ErrUnavailable, "the source node does not answer")
	}
	return nil
}

// SetMarker sets the move.marker the listing carries (nil: none).
func (s *TransferSource) SetMarker(m *ports.MoveMarker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marker = m
}

// Freezes counts successful freezes and re-arms.
func (s *TransferSource) Freezes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.freezes
}

// Lapse ends the freeze as a TTL would.
func (s *TransferSource) Lapse() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = ""
}

func (s *TransferSource) listingLocked() ports.TransferListing {
	l := ports.TransferListing{HighWatermark: s.hwm, Marker: s.marker}
	for _, n := range slices.Sorted(maps.Keys(s.segments)) {
		l.Segments = append(l.Segments, ports.TransferFile{Name: n, Size: int64(len(s.segments[n]))})
	}
	for _, n := range slices.Sorted(maps.Keys(s.side)) {
		l.Side = append(l.Side, ports.TransferFile{Name: n, Size: int64(len(s.side[n]))})
	}
	return l
}

// TransferListing lists the partition.
func (s *TransferSource) TransferListing(context.Context, string, domain.PartitionRef) (ports.TransferListing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.downErr(); err != nil {
		return ports.TransferListing{}, err
	}
	return s.listingLocked(), nil
}

// FetchTransferChunk reads a chunk of a segment or side file.
func (s *TransferSource) FetchTransferChunk(_ context.Context, _ string, _ domain.PartitionRef, name string, off int64, max int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.downErr(); err != nil {
		return nil, err
	}
	b, ok := s.segments[name]
	if !ok {
		b, ok = s.side[name]
	}
	if !ok {
		return nil, domain.Refuse(domain.ErrOffsetGone, name+" is gone")
	}
	if off >= int64(len(b)) {
		return []byte{}, nil
	}
	return slices.Clone(b[off:min(int64(len(b)), off+int64(max))]), nil
}

// PrepareHandoff freezes (token empty) or re-arms, and lists.
func (s *TransferSource) PrepareHandoff(_ context.Context, _ string, _ domain.PartitionRef, token string) (string, ports.TransferListing, error) {
	s.mu.Lock()
	if err := s.downErr(); err != nil {
		s.mu.Unlock()
		return "", ports.TransferListing{}, err
	}
	switch {
	case token == "":
		s.token = fmt.Sprintf("tok%d", s.freezes)
	case token != s.token:
		s.mu.Unlock()
		return "", ports.TransferListing{}, domain.Refuse(domain.ErrConflict, "the freeze lapsed")
	}
	s.freezes++
	tok, hook := s.token, s.OnFreeze
	s.mu.Unlock()
	if hook != nil {
		hook(s)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return tok, s.listingLocked(), nil
}

// Installer is a destination's staging and installed partitions in memory.
type Installer struct {
	mu         sync.Mutex
	staged     map[domain.PartitionRef]map[string][]byte
	installed  map[domain.PartitionRef]Installed
	uninstalls int
}

// Installed is one installed copy.
type Installed struct {
	Files  map[string][]byte
	HWM    int64
	Marker ports.MoveMarker
}

// NewInstaller returns an empty Installer.
func NewInstaller() *Installer {
	return &Installer{staged: map[domain.PartitionRef]map[string][]byte{}, installed: map[domain.PartitionRef]Installed{}}
}

// Installed returns the installed copy of ref.
func (i *Installer) Installed(ref domain.PartitionRef) (Installed, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	c, ok := i.installed[ref]
	return c, ok
}

// StagingReset empties ref's staging.
func (i *Installer) StagingReset(ref domain.PartitionRef) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.staged[ref] = map[string][]byte{}
	return nil
}

// StagingSize is the staged length of name.
func (i *Installer) StagingSize(ref domain.PartitionRef, name string) (int64, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return int64(len(i.staged[ref][name])), nil
}

// StagingWrite writes b at off of name.
func (i *Installer) StagingWrite(ref domain.PartitionRef, name string, off int64, b []byte) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.staged[ref] == nil {
		return fmt.Errorf("fake installer: no staging for %v", ref)
	}
	f := i.staged[ref][name]
	if need := off + int64(len(b)); int64(len(f)) < need {
		f = append(f, make([]byte, need-int64(len(f)))...)
	}
	copy(f[off:], b)
	i.staged[ref][name] = f
	return nil
}

// StagingTruncate cuts name to size.
func (i *Installer) StagingTruncate(ref domain.PartitionRef, name string, size int64) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if f, ok := i.staged[ref][name]; ok && int64(len(f)) > size {
		i.staged[ref][name] = f[:size]
	}
	return nil
}

// StagingKeep drops staged files not in keep.
func (i *Installer) StagingKeep(ref domain.PartitionRef, keep map[string]bool) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	for n := range i.staged[ref] {
		if !keep[n] {
			delete(i.staged[ref], n)
		}
	}
	return nil
}

// Install records the staged copy of ref as installed with marker m.
func (i *Installer) Install(ref domain.PartitionRef, m ports.MoveMarker) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.installed[ref] = Installed{Files: maps.Clone(i.staged[ref]), HWM: m.PromotedHighWatermark, Marker: m}
	delete(i.staged, ref)
	return nil
}

// StagingRemove drops the staging of ref's topic and partition (staging
// carries no incarnation: ref's may be empty).
func (i *Installer) StagingRemove(ref domain.PartitionRef) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	for staged := range i.staged {
		if staged.Topic == ref.Topic && staged.Partition == ref.Partition {
			delete(i.staged, staged)
		}
	}
	return nil
}

// Uninstall takes ref's installed copy back to staging.
func (i *Installer) Uninstall(ref domain.PartitionRef) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	in, ok := i.installed[ref]
	if !ok {
		return domain.Refuse(domain.ErrConflict, "nothing installed")
	}
	i.staged[ref] = in.Files
	delete(i.installed, ref)
	i.uninstalls++
	return nil
}

// Uninstalls counts the copies taken back to staging.
func (i *Installer) Uninstalls() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.uninstalls
}

// Staged reports whether ref has staging.
func (i *Installer) Staged(ref domain.PartitionRef) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	_, ok := i.staged[ref]
	return ok
}
