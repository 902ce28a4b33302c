// Package loopbackport hands tests loopback ports for the servers they
// start: ports below the kernel's ephemeral range, free when picked, and
// never handed out twice in one process. It is test support; no server
// code imports it.
package loopbackport
