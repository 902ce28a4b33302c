package httpapi

// Body reading (internals.md §10.4): a body is never allocated at its
// declared length.
const (
	// bodyExactMaxBytes: a body declared this small is read into a buffer of
	// exactly its length; larger or undeclared bodies start here.
	bodyExactMaxBytes = 64 << 10
	// bodyGrowFactor: a buffer that fills grows this many times over.
	bodyGrowFactor = 4
	// batchBodyMaxBytes caps a batch produce body, as sent and decoded.
	batchBodyMaxBytes = 16 << 20
	// zstdWindowMaxBytes bounds the window a zstd body may ask the decoder for.
	zstdWindowMaxBytes = 8 << 20
)

// The node's batch-body budget (api.md §2.13.1, internals.md §3.2).
const (
	// batchBodyBudgetFreeBytes: a batch body this long or shorter never
	// touches the budget.
	batchBodyBudgetFreeBytes = 1 << 20
	// batchBodyBudgetUnitBytes: a longer body claims the budget this much at
	// a time as it grows.
	batchBodyBudgetUnitBytes = 1 << 20
	// batchBodyBudgetRetryAfterSeconds is the Retry-After of the budget's 503.
	batchBodyBudgetRetryAfterSeconds = "1"
)
