package remotes

// DryRunCapabilities exposes the dry run's target probe to the tests of
// package remotes_test.
var DryRunCapabilities = (*Service).dryRunCapabilities
