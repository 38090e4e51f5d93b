package main

import "errors"

// errNotEmbedded refuses embedded mode in a build without its services.
var errNotEmbedded = errors.New("built without embedded services; pass --redis-url and --kafka-brokers")

// closerAddr is the in-process Redis, running.
type closerAddr interface {
	Addr() string
	Close()
}

// brokerRunning is the in-process Kafka-protocol broker, running.
type brokerRunning interface {
	Addrs() []string
	Close()
}
