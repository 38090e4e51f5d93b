// Package gate puts waitroom in front of a checkout that was not written
// for it. NewProxy is the reverse-proxy mode that runs inside waitroom:
// requests to protected paths pass to the upstream only with a valid entry
// token; browsers without one go to the waiting page and come back after
// admission, API clients get 429 with their place in line (and, while the
// room's proof of work is on, first a 403 challenge to solve and send back
// in X-Waitroom-Pow, as waitroom's enter asks). Split routes
// waitroom's own paths to waitroom and the rest to the proxy on one origin.
//
// Shops that would rather check tokens in their own Go server import
// package gate/middleware instead, which needs no Redis.
//
// Meter measures the upstream (in flight, latency) for adaptive activation
// and the dashboard.
package gate
