package telemetry

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// SizeSample is one local partition's storage at scrape time.
type SizeSample struct {
	Topic     string
	Partition int32
	Bytes     int64 // bytes of the segment files
	Segments  int   // segment files
}

// sizeCollector exports narad_partition_size_bytes, narad_segments and
// their per-topic sum narad_topic_bytes from samples read at scrape time; a
// partition that moved away simply stops appearing.
type sizeCollector struct {
	sample                     func() []SizeSample
	partBytes, segments, topic *prometheus.Desc
}

// SizeGauges registers the per-partition and per-topic size gauges, read
// from sample at every scrape. sample must answer quickly and never open a
// closed log.
func (m *Metrics) SizeGauges(sample func() []SizeSample) {
	tp := []string{"topic", "partition"}
	m.Registry.MustRegister(&sizeCollector{
		sample:    sample,
		partBytes: prometheus.NewDesc("narad_partition_size_bytes", "Bytes of a partition's segment files on this node.", tp, nil),
		segments:  prometheus.NewDesc("narad_segments", "Segment files of a partition on this node.", tp, nil),
		topic:     prometheus.NewDesc("narad_topic_bytes", "Bytes of a topic's partitions on this node.", []string{"topic"}, nil),
	})
}

func (c *sizeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.partBytes
	ch <- c.segments
	ch <- c.topic
}

func (c *sizeCollector) Collect(ch chan<- prometheus.Metric) {
	perTopic := map[string]int64{}
	for _, s := range c.sample() {
		p := strconv.Itoa(int(s.Partition))
		ch <- prometheus.MustNewConstMetric(c.partBytes, prometheus.GaugeValue, float64(s.Bytes), s.Topic, p)
		ch <- prometheus.MustNewConstMetric(c.segments, prometheus.GaugeValue, float64(s.Segments), s.Topic, p)
		perTopic[s.Topic] += s.Bytes
	}
	for topic, bytes := range perTopic {
		ch <- prometheus.MustNewConstMetric(c.topic, prometheus.GaugeValue, float64(bytes), topic)
	}
}

// diskCollector exports the data directory's filesystem usage and free
// space, read with statfs at every scrape; nothing when statfs fails or is
// not available on this platform.
type diskCollector struct {
	dir         string
	used, avail *prometheus.Desc
}

// DataDirGauges registers narad_data_dir_size_bytes (bytes used on the
// filesystem holding dir) and narad_data_dir_available_bytes (bytes an
// unprivileged writer may still use there).
func (m *Metrics) DataDirGauges(dir string) {
	m.Registry.MustRegister(&diskCollector{
		dir:   dir,
		used:  prometheus.NewDesc("narad_data_dir_size_bytes", "Bytes used on the filesystem holding the data directory.", nil, nil),
		avail: prometheus.NewDesc("narad_data_dir_available_bytes", "Bytes still available to the node on the filesystem holding the data directory.", nil, nil),
	})
}

func (c *diskCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.used
	ch <- c.avail
}

func (c *diskCollector) Collect(ch chan<- prometheus.Metric) {
	used, avail, err := diskUsage(c.dir)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, float64(used))
	ch <- prometheus.MustNewConstMetric(c.avail, prometheus.GaugeValue, float64(avail))
}
