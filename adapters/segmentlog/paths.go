package segmentlog

import "path/filepath"

// PartitionDir names the directory of topic's partition under dataDir, as
// the store lays it out (see Layout in the package doc). Adapters that keep
// files beside a partition's log (fan-out cursors) use it; they must never
// create the directory themselves.
func PartitionDir(dataDir, topic string, partition int32) string {
	return filepath.Join(dataDir, topicsDirName, topic, partitionDirName(partition))
}

// MarkerPath names topic's incarnation marker under dataDir: it holds the
// id of the incarnation the topic's directory belongs to.
func MarkerPath(dataDir, topic string) string {
	return filepath.Join(dataDir, topicsDirName, topic, markerFileName)
}
