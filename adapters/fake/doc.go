// Package fake holds in-memory fakes of every port, for use-case tests. Each
// fake keeps the observable contract of its port (the same ports/porttest
// conformance suite runs against it and against the real adapter) and adds
// small hooks for tests, such as making the next operation fail. Fakes do no
// file or network I/O.
package fake
