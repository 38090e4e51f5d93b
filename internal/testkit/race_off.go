//go:build !race

package testkit

// Race is whether the race detector is on: a test whose work is pure
// computation (thousands of scrypt runs) or bulk repetition can size itself
// down under it, since CI also runs every test without it.
const Race = false
