// Package domain holds Narad's pure types and rules: records, topic ids,
// and the sentinel errors every ring shares. It performs no I/O, starts no
// goroutines and reads no clock; time is always passed in.
package domain
