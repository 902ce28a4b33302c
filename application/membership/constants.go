package membership

// Voter targets: a cluster grows to 3 voters by default, 5 when configured.
const (
	DefaultMaxVoters = 3
	LargeMaxVoters   = 5
)
