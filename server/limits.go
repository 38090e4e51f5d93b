package server

import "time"

// Limits bound what one client can hold open; zero values are no limit.
// The server's connection caps, overall and per address, are ConnListener's.
type Limits struct {
	// BodyTimeout is how long a request but a push stream may take to send
	// its body, from when its headers were read (bodyDeadline).
	BodyTimeout time.Duration
	// PushPerTicket and PushPerIP cap open push connections (WebSocket and
	// SSE) per ticket and per client address, IPv6 per /64 (pushLimits).
	PushPerTicket, PushPerIP int
}
