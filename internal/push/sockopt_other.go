//go:build !linux

package push

import (
	"net"
	"time"
)

// setUserTimeout does nothing here: TCP_USER_TIMEOUT is Linux's. A peer
// gone without a word is found by the keep-alive of a silent connection,
// or by the kernel's retransmission limit.
func setUserTimeout(net.Conn, time.Duration) {}
