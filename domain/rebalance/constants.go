package rebalance

// MaxInFlightMovesDefault is how many partition moves may be in flight in
// the whole cluster at once (internals.md §11.2, §11.8 `MaxInFlightMoves`);
// 0 disables planning.
const MaxInFlightMovesDefault = 8
