// Package metawatch fans applied metadata changes out to subscribers without
// ever blocking the applier: a subscriber that falls a whole buffer behind is
// dropped with meta.ErrWatchLagged and re-reads. Shared by the pebble store
// and the in-memory fake.
//
// It must never block Publish, and never import dragonboat or pebble.
package metawatch
