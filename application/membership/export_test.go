package membership

import "time"

// SetPace shortens the join loop's 2 s retry and 1 s leader check, so a
// test drives many ticks without waiting for them.
func (j *Joiner) SetPace(retry, check time.Duration) {
	j.interval, j.checkEvery = retry, check
}
