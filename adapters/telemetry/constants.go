package telemetry

// Histogram buckets: exponential from a start, by a factor, a count.
const (
	bucketFactor                = 4
	storageIOBucketStartSeconds = 0.0001 // 100 µs … about 6.5 s over 9 buckets
	storageIOBuckets            = 9
	schemaBucketStartSeconds    = 0.00005 // 50 µs … about 3.3 s over 9 buckets
	schemaBuckets               = 9
	rpcBucketStartSeconds       = 0.0001 // 100 µs … about 6.5 s over 9 buckets
	rpcBuckets                  = 9
	moveSecondsBucketStart      = 0.1 // 100 ms … about 6,550 s over 9 buckets
	moveSecondsBuckets          = 9
	remoteBucketStartSeconds    = 0.0005 // 500 µs … about 33 s over 9 buckets
	remoteBuckets               = 9
	fanoutRecordsBucketStart    = 1 // 1 … 4,096 records over 7 buckets
	fanoutRecordsBuckets        = 7
	fanoutBytesBucketStart      = 64 // 64 B … 4 MiB over 9 buckets
	fanoutBytesBuckets          = 9
)

// Label values this package sets itself (api.md §7).
const (
	componentStorage = "storage"
	outcomeOK        = "ok"
	outcomeError     = "error"
	reasonAge        = "age"
)
