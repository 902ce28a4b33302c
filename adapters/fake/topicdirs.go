package fake

import (
	"fmt"
	"slices"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.TopicDirs = (*TopicDirs)(nil)

// TopicDirs is an in-memory ports.TopicDirs: a set of directory entries.
// Safe for concurrent use.
type TopicDirs struct {
	mu   sync.Mutex
	dirs []ports.TopicDir
}

// NewTopicDirs returns TopicDirs holding dirs.
func NewTopicDirs(dirs ...ports.TopicDir) *TopicDirs {
	return &TopicDirs{dirs: slices.Clone(dirs)}
}

// TopicDirs lists the entries.
func (f *TopicDirs) TopicDirs() ([]ports.TopicDir, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.dirs), nil
}

// ReclaimTopicDir removes the entry equal to d, ErrConflict when none is.
func (f *TopicDirs) ReclaimTopicDir(d ports.TopicDir) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.dirs, d)
	if i < 0 {
		return fmt.Errorf("fake topic dirs: %s changed: %w", d.Dir, domain.ErrConflict)
	}
	f.dirs = slices.Delete(f.dirs, i, i+1)
	return nil
}

// Names lists the remaining entries' names.
func (f *TopicDirs) Names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.dirs))
	for i, d := range f.dirs {
		out[i] = d.Dir
	}
	return out
}
