package partdir

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// The names below are adapters/segmentlog's layout, which owns the
// partition directories. Part of the on-disk format: never change them.
const (
	markerFileName     = "incarnation"
	topicsDirName      = "topics"
	partitionDirDigits = 5 // p<5-digit partition>
)

// TopicDir names topic's directory under dataDir: dataDir/topics/<topic>.
func TopicDir(dataDir, topic string) string {
	return filepath.Join(dataDir, topicsDirName, topic)
}

// MarkerPath names topic's incarnation marker under dataDir: it holds the
// id of the incarnation the topic's directory belongs to.
func MarkerPath(dataDir, topic string) string {
	return filepath.Join(dataDir, topicsDirName, topic, markerFileName)
}

// Dir names ref's partition directory under dataDir:
// dataDir/topics/<topic>/p<NNNNN>.
func Dir(dataDir string, ref domain.PartitionRef) string {
	name := strconv.Itoa(int(ref.Partition))
	if pad := partitionDirDigits - len(name); pad > 0 {
		name = strings.Repeat("0", pad) + name
	}
	return filepath.Join(dataDir, topicsDirName, ref.Topic, "p"+name)
}

// ValidRef refuses a ref no partition directory can belong to: a bad topic
// name, a negative partition or a malformed id (domain.ErrInvalidRecord).
// Callers prefix the error with their package name.
func ValidRef(ref domain.PartitionRef) error {
	if err := domain.ValidateTopicName(ref.Topic); err != nil {
		return fmt.Errorf("%w: %w", domain.ErrInvalidRecord, err)
	}
	if ref.Partition < 0 || !ref.TopicID.Valid() {
		return fmt.Errorf("partition %d id %q: %w", ref.Partition, ref.TopicID, domain.ErrInvalidRecord)
	}
	return nil
}

// Ours reports whether ref's partition directory under dataDir exists and
// belongs to ref's incarnation: its topic's marker names ref.TopicID (a
// missing marker names none). A legacy empty id accepts any directory.
// Callers prefix the error with their package name.
func Ours(fsys vfs.FS, dataDir string, ref domain.PartitionRef) (bool, error) {
	if _, err := fsys.Stat(Dir(dataDir, ref)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("stat %s: %w", ref, err)
	}
	if ref.TopicID == "" {
		return true, nil
	}
	b, err := vfs.ReadFile(fsys, MarkerPath(dataDir, ref.Topic))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read incarnation marker of %s: %w", ref.Topic, err)
	}
	return domain.TopicID(strings.TrimSpace(string(b))) == ref.TopicID, nil
}
