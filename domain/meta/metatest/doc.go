// Package metatest runs the metadata golden scripts (testdata/*.txt of
// package meta) against any state machine that applies meta entries: the
// pure apply over MemKV, the pebble state machine, the fake store. One script
// set, every implementation: the rules cannot drift apart.
//
// It is test support: it must never be imported by production code.
package metatest
