package authn

import (
	"time"

	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
)

// Input limits (api.md §0.6, §2.16): anything beyond them is answered 401
// at once, without a store read or a password check.
const (
	usernameMaxBytes = meta.UsernameMaxChars // A-Z a-z 0-9 . _ - only, so bytes = characters
	passwordMaxBytes = access.PasswordMaxBytes
)

// Caches (internals.md §12.1).
const (
	cachedUsersMax         = 4096             // users with a cache entry
	negativeTTL            = 60 * time.Second // a wrong password is answered from cache this long
	negativePerUserMax     = 16               // wrong passwords cached per user
	unknownPairsMax        = 4096             // our choice: cached unknown (username, credential) pairs
	credentialMACKeyBytes  = 32               // the per-process HMAC-SHA256 key
	credentialMACBlockSize = 64               // SHA-256's block size, the HMAC pad length
)

// The per-user failure bucket (api.md §0.8, §4.1): burst 5, one token back
// every 12 s, per node.
const (
	failedBucketBurstTokens    = 5
	failedBucketRefillInterval = 12 * time.Second
)

// The node-wide failure budget (internals.md §12.1): burst 32, refilled at
// 4 per second, for usernames with recent failures.
const (
	failureBudgetBurstTokens    = 32
	failureBudgetRefillInterval = 250 * time.Millisecond // 4 tokens per second
	// throttleAuditInterval: a budget refusal is audit-logged at most this
	// often per node, a per-user refusal at most this often per user (the
	// latter our choice, so a client hammering an empty bucket cannot flood
	// the audit log).
	throttleAuditInterval = 10 * time.Second
)

// Password checks (internals.md §12.1).
const (
	verifySlotsMax = 4 // bcrypt verifications at once per node
	// verifyEstimateWeight: each measured check moves the estimate of one
	// verification by 1/8 of its difference (an exponential moving average).
	verifyEstimateWeight = 8
	// verifyEstimateMax caps how long an unknown username is held (our
	// choice: a check slowed by an overloaded CPU must not pin requests for
	// long).
	verifyEstimateMax = time.Second
	// calibrationPasswordBytes is the random password Start hashes and
	// checks once to seed the estimate.
	calibrationPasswordBytes = 16
)

// Watching metadata.
const (
	watchBufferCount   = 256         // applied entries buffered for the watcher
	watchRetryInterval = time.Second // between attempts to watch again after a failure
)
