//go:build !unix

package main

// quietSysmon is a no-op where the process cannot re-execute itself.
func quietSysmon([]string) {}
