package meta

// Topic is one topic incarnation as every replica holds it.
type Topic struct {
	Name                string   `json:"name"`
	ID                  string   `json:"id,omitempty"`
	Partitions          int32    `json:"partitions"`
	RetentionMs         int64    `json:"retention_ms"`
	VisibilityTimeoutMs int64    `json:"visibility_timeout_ms"`
	MaxInFlight         int64    `json:"max_in_flight_per_partition"`
	MaxAckedAhead       int64    `json:"max_acked_ahead_per_partition"`
	CreatedAt           int64    `json:"created_at"`
	Owner               string   `json:"owner,omitempty"`
	Children            []string `json:"children,omitempty"`
	Parent              string   `json:"parent,omitempty"`
	AttachEpoch         string   `json:"attach_epoch,omitempty"`
	FanoutDelayMs       int64    `json:"fanout_delay_ms,omitempty"`
	AttachOffsets       []int64  `json:"attach_offsets,omitempty"`
	// Remote is set only on a remote child's stub (partitions 0, no owner):
	// the link that ships the parent's records to a topic on another cluster.
	Remote *RemoteLink `json:"remote,omitempty"`
	// Redelivery is the topic's redelivery backoff; nil when it has none.
	Redelivery *Redelivery `json:"redelivery,omitempty"`
	// DeadLetter is the topic's dead-letter policy; nil when it has none.
	DeadLetter *DeadLetter `json:"dead_letter,omitempty"`
	// Redrive is the last redrive job of this topic as a dead-letter topic;
	// nil when none was started.
	Redrive *Redrive `json:"redrive,omitempty"`
}

// Redelivery is a topic's redelivery backoff (our extension; see
// docs/api-extensions.md): after its nth delivery ends in a plain nack or
// a lapsed lease, a message waits min(InitialMs * Multiplier^(n-1), MaxMs)
// before it can be delivered again, less up to Jitter of that wait drawn
// at random.
type Redelivery struct {
	InitialMs  int64   `json:"initial_ms"`
	Multiplier float64 `json:"multiplier"`
	MaxMs      int64   `json:"max_ms"`
	Jitter     float64 `json:"jitter"`
}

// DeadLetter is a topic's dead-letter policy (our extension; see
// docs/api-extensions.md "Dead letters"): a message delivered
// MaxReceiveCount times without being settled is written to Topic instead
// of being delivered again, and settled in its own topic.
type DeadLetter struct {
	Topic           string `json:"topic"`
	MaxReceiveCount uint32 `json:"max_receive_count"`
}

// IsRemoteStub reports whether t is a remote child's stub: it takes no
// produce, no consume and no alter.
func (t Topic) IsRemoteStub() bool { return t.Remote != nil }

// Where a remote child starts on each parent partition (resolved into the
// stub's attach offsets by the leader while proposing).
const (
	RemoteFromAttach     = "attach"
	RemoteFromUnconsumed = "unconsumed"
	RemoteFromEarliest   = "earliest"
)

// RemoteLink is the `remote` object of a remote child's stub.
type RemoteLink struct {
	// Name and RemoteID name the remote (and its incarnation) the link uses.
	Name     string `json:"name"`
	RemoteID string `json:"remote_id"`
	// Topic is the target topic on the remote.
	Topic string `json:"topic"`
	// TargetID is the target topic's incarnation id as the attach, or the
	// last resume with accept_target, saw it; empty when the target serves
	// no ids.
	TargetID string `json:"target_id,omitempty"`
	From     string `json:"from"`
	Lanes    int32  `json:"lanes"`
	// Paused and its fields are set only while the link is paused.
	Paused      bool   `json:"paused,omitempty"`
	PauseReason string `json:"pause_reason,omitempty"`
	PausedBy    string `json:"paused_by,omitempty"`
	PausedAtMs  int64  `json:"paused_at_ms,omitempty"`
	// Skip holds, per parent partition (ascending), the offsets an admin
	// accepted to lose, ascending, at most RemoteSkipMaxOffsets each.
	Skip      []PartitionSkip `json:"skip,omitempty"`
	CreatedBy string          `json:"created_by,omitempty"`
}

// PartitionSkip is one parent partition's skipped offsets, ascending.
type PartitionSkip struct {
	Partition int32   `json:"partition"`
	Offsets   []int64 `json:"offsets"`
}

// Topic roles as the API names them.
const (
	RoleStandalone = "standalone"
	RoleParent     = "parent"
	RoleChild      = "child"
)

// Role is child when attached to a parent, parent when it has children.
func (t Topic) Role() string {
	switch {
	case t.Parent != "":
		return RoleChild
	case len(t.Children) > 0:
		return RoleParent
	}
	return RoleStandalone
}

// SchemaVersion is one entry of a topic's append-only schema history.
type SchemaVersion struct {
	Topic   string `json:"topic"`
	Version int32  `json:"version"`
	Schema  []byte `json:"schema"`
}

// Assignment places one partition: Owner serves it; Target is set only while
// a move is under way.
type Assignment struct {
	Topic     string `json:"topic"`
	TopicID   string `json:"topic_id,omitempty"`
	Partition int32  `json:"partition"`
	Owner     string `json:"owner"`
	Target    string `json:"target,omitempty"`
}

// BelongsTo reports whether the row places a partition of incarnation
// topicID: a row naming that id, or one written before rows carried ids
// (it belongs to whichever incarnation holds the name).
func (a Assignment) BelongsTo(topicID string) bool { return a.TopicID == "" || a.TopicID == topicID }

// Member statuses.
const (
	StatusAlive = "alive"
	StatusDead  = "dead"
)

// Member is one node's registration.
type Member struct {
	ID          string `json:"id"`
	Addr        string `json:"addr"`
	ClusterAddr string `json:"cluster_addr"`
	Status      string `json:"status"`
	// LastHeartbeat is Unix seconds, stamped by the leader's clock.
	LastHeartbeat int64     `json:"last_heartbeat"`
	Draining      bool      `json:"draining,omitempty"`
	Build         string    `json:"build,omitempty"`
	EntryTypes    EntryType `json:"entry_types,omitempty"`
}

// Tombstone marks a decommissioned node id; it cannot register again until
// readmitted.
type Tombstone struct {
	ID string `json:"id"`
	At int64  `json:"at"`
}

// Grant is one permission: an action and the topic patterns it covers.
type Grant struct {
	Action   string   `json:"action"`
	Patterns []string `json:"patterns,omitempty"`
}

// User is one account. PasswordHash is bcrypt and is never returned by the
// API.
type User struct {
	Username     string  `json:"username"`
	PasswordHash []byte  `json:"password_hash"`
	Grants       []Grant `json:"grants,omitempty"`
	Root         bool    `json:"root,omitempty"`
	CreatedAtMs  int64   `json:"created_at_ms,omitempty"`
	UpdatedAtMs  int64   `json:"updated_at_ms,omitempty"`
}

// Link is one fan-out attachment, derived from the child's topic record.
type Link struct {
	Parent        string
	Child         string
	Epoch         string
	DelayMs       int64
	AttachOffsets []int64
	// Remote is set when the child is a remote child's stub.
	Remote *RemoteLink
}

// Move is one partition on its way from Owner to Target, derived from its
// assignment row.
type Move struct {
	Topic     string
	TopicID   string
	Partition int32
	From      string
	To        string
}

// RemoteLimits are a remote's live-changeable bounds.
type RemoteLimits struct {
	MaxInFlight       int32  `json:"max_in_flight"`
	RequestTimeoutMs  int64  `json:"request_timeout_ms"`
	IdleConnTimeoutMs int64  `json:"idle_conn_timeout_ms"`
	ConnMaxAgeMs      int64  `json:"conn_max_age_ms"`
	CheckIntervalMs   int64  `json:"check_interval_ms"`
	Compression       string `json:"compression"`
}

// Remote is another cluster this one may send to. The password is held only
// as a sealed envelope; nothing here decrypts it.
type Remote struct {
	Name              string       `json:"name"`
	ID                string       `json:"id"`
	URL               string       `json:"url"`
	Username          string       `json:"username"`
	SealedPassword    []byte       `json:"sealed_password"`
	KeyVersion        string       `json:"key_version"`
	Fingerprint       string       `json:"fingerprint"`
	CAPEM             string       `json:"ca_pem,omitempty"`
	Limits            RemoteLimits `json:"limits"`
	CredentialVersion int64        `json:"credential_version"`
	Revision          int64        `json:"revision"`
	CreatedAtMs       int64        `json:"created_at_ms"`
	CreatedBy         string       `json:"created_by"`
	SetAtMs           int64        `json:"set_at_ms"`
	SetBy             string       `json:"set_by"`
}

// JournalEntry is one line of the metadata history: which entry changed what,
// when, proposed by whom, and what apply decided.
type JournalEntry struct {
	Seq     uint64    `json:"seq"`
	Index   uint64    `json:"index"`
	AtMs    int64     `json:"at_ms"`
	Actor   string    `json:"actor,omitempty"`
	Type    EntryType `json:"type"`
	Subject string    `json:"subject"`
	Code    Code      `json:"code"`
	Detail  string    `json:"detail,omitempty"`
}
