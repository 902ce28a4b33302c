// Package e2e holds black-box tests of the real narad binary: it is built
// once per test run and driven as a user would, through its command line and,
// as the broker lands, its HTTP API on loopback and a container cluster.
package e2e
