//go:build noembedded

package main

// embeddedServices: built with -tags noembedded, without miniredis and
// kfake; config refuses embedded mode before these are reached.
const embeddedServices = false

func startEmbeddedRedis() (closerAddr, error) { return nil, errNotEmbedded }

func startEmbeddedBroker(string, []string) (brokerRunning, error) { return nil, errNotEmbedded }
