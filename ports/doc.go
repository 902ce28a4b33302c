// Package ports holds the interfaces the use cases need from the outside
// world, one file per port, each documented as a contract: concurrency, slice
// ownership and the sentinel errors of package domain it returns. Ports import
// only package domain.
package ports
