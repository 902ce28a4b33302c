// Package porttest holds the conformance suites of the ports: one exported
// function per port, run by every adapter's tests and by the in-memory fake's,
// so that a fake and the real adapter keep one observable contract.
package porttest
