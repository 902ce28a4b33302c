// Package application is the ring of use cases, one package each (produce,
// consume, topics, users, fanout, controller, rebalance, remote). Use cases
// orchestrate ports and domain rules; they never open a file or a socket, and
// they are tested with the in-memory fakes of adapters/fake.
package application
