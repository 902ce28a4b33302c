// Package meta holds Narad's metadata as events and views: the Raft entry
// types with their frozen numbers, their binary envelope, the apply rules that
// turn an entry into view mutations, and the read functions over those views.
//
// Apply is a pure function of the current views (read through KVReader) and
// the entry: it never reads a clock or a random source, since time and ids
// travel inside the entry. Business refusals (exists, not found, CAS missed)
// are Results applied alike on every replica, never errors. The pebble state
// machine and the in-memory fake both apply entries through this package, so
// the rules are written once.
//
// This package must never perform I/O, start goroutines or import anything
// outside the standard library and other domain packages.
package meta
