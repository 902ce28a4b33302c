package moves

// SweepFullEverySweeps exports sweepFullEverySweeps to the tests.
const SweepFullEverySweeps = sweepFullEverySweeps
