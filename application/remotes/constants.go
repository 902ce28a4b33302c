package remotes

import "time"

// Bounds of the remotes API (api.md §2.18, internals.md §7.1).
const (
	passwordMinBytes        = 24
	passwordMaxBytes        = 72
	caPEMMaxBytes           = 64 << 10
	caCertsMaxCount         = 16
	saltBytes               = 32
	idBytes                 = 8 // 16 hex characters
	requestIDBytes          = 8 // a remote write's request id: 16 hex characters
	usernameMaxChars        = 64
	writesPerWindowMax      = 10
	childWritesPerWindowMax = 60
	writesWindow            = time.Minute
	checkSpacing            = 5 * time.Second // one check of a remote per node per 5 s
	memberCheckTimeout      = 15 * time.Second
	unverifiedAfter         = 10 * time.Minute
	certExpiryWarnAhead     = 14 * 24 * time.Hour
	ownerAnswerTimeout      = 2 * time.Second // one owner's answer to a children listing
	postureAnswerTimeout    = 5 * time.Second // one member's posture answer to the posture gate
)

// Defaults and ranges of a remote's limits (internals.md §7.1).
const (
	maxInFlightDefault       = 16
	requestTimeoutMsDefault  = 30_000
	idleConnTimeoutMsDefault = 30_000
	connMaxAgeMsDefault      = 300_000
	checkIntervalMsDefault   = 60_000
	compressionDefault       = "none"
)

// Messages of the remotes API the clients read (api.md §2.18).
const (
	MsgHopNeeded   = "remote writes carry a password, so this node needs an encrypted API hop: set remotes.api_hop_encrypted"
	msgWrites      = "at most 10 remote writes a minute on this node"
	msgCheckBusy   = "a check for this remote is already running or ran less than 5s ago; retry"
	msgChildWrites = "at most 60 remote-child writes a minute on this node"
)
