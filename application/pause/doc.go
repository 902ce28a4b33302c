// Package pause holds the one wait the background workers of the use
// cases share: sleep for a while unless the context ends first.
package pause
