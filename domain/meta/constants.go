package meta

// Every bound of the metadata rules, from the spec (internals §7.1, §8.1,
// api §0.6, §0.8). Units are in the names. Node config may narrow some
// (topic.max_partitions is 108 by default); these are the hard bounds a
// replica applies, so changing one changes apply and needs a new entry type.
const (
	TopicNameMaxNewChars    = 200 // a topic created now
	TopicNameMaxLegacyChars = 255 // a topic created by older releases
	UsernameMaxChars        = 64
	MemberIDMaxChars        = 64
	AddrMaxBytes            = 261 // host:port
	PartitionsMaxCount      = 4096
	ChildrenMaxCount        = 108 // children per parent
	DelayMaxMs              = int64(365 * 24 * 3600 * 1000)
	RetentionFloorMs        = int64(3600 * 1000) // a delay child needs delay + this
	SchemaVersionsMaxCount  = 1000
	SchemaDocMaxBytes       = 256 << 10 // one schema document
	SchemaTopicMaxBytes     = 4 << 20   // stored versions per topic
	SchemaClusterMaxBytes   = 256 << 20 // every schema in the cluster, copies included
	RemotesMaxCount         = 64
	RemoteSealsMaxPerKey    = int64(1) << 30
	// Remote children (internals §7.1, api §2.10.2, §2.12.1).
	RemoteChildrenMaxCount     = 16                      // remote children per parent
	RemoteParentRetentionMinMs = int64(24 * 3600 * 1000) // a parent with remote children keeps ≥ 24 h (or 0)
	RemoteLanesMax             = 8                       // lanes per remote child
	RemoteSkipMaxOffsets       = 4000                    // skipped offsets kept per parent partition
	PauseReasonMaxBytes        = 256                     // a pause reason
	// JournalKeep is how many history entries a replica keeps by default.
	JournalKeep = 10_000

	passwordHashMaxBytes = 128 // bcrypt hashes are 60
	epochHexChars        = 16
	topicIDHexChars      = 16
	remoteNameMaxChars   = 63
	remoteURLMaxBytes    = 2048
	remoteCAMaxBytes     = 64 << 10
	remoteSaltBytes      = 32
	sealedMaxBytes       = 1024
	fingerprintHexChars  = 12
	remoteDefaultPort    = "443" // a canonical remote URL omits it
)
