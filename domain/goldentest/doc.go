// Package goldentest runs the golden scripts of the pure state machines
// (domain/lease, domain/deadletter, domain/schedule): each script's output
// is compared with the file, or, with -update, written back into it. It is
// for tests only.
package goldentest
