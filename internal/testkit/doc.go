// Package testkit holds what tests across the module share: waiting for a
// condition, and the store a handler test runs on (the memory store in the
// fast tier, a real redis-server in the full one).
package testkit
