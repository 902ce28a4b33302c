//go:build race

package remote

// raceEnabled: the race detector drops sync.Pool items at random, so
// json.Valid's pooled scanner is sometimes allocated again.
const raceEnabled = true
