// Package ctxwait holds the one pause the background workers of the use
// cases take between tries: a timer that a cancelled context cuts short.
package ctxwait
