package ports

import "time"

// Clock tells the time. Use cases take it as a port so tests control time;
// domain code never reads a clock, it is handed times.
type Clock interface {
	Now() time.Time
}
