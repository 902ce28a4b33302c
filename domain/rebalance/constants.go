package rebalance

// MaxInFlightMovesDefault is how many partition moves may be in flight in
// the whole cluster at once (internals.md §11.2, §11.8 `MaxInFlightMoves`);
// 0 disables planning.
const MaxInFlightMovesDefault = 8

// MinVoters is the floor decommission keeps the Raft voters at
// (internals.md §11.7, §11.8 `MinVoters`): a decommission that would leave
// fewer voters is refused, and a drained voter is removed only while at
// least this many remain.
const MinVoters = 3
