// Package storetest is the conformance suite of ports.MetadataStore: the
// same contract tests run against the pebble/dragonboat store and the
// in-memory fake, so use-case tests on the fake mean something.
//
// It is test support: production code must never import it.
package storetest
