package testkit

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fatalTB records a Fatalf and ends its goroutine, as testing does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func run(f func(tb testing.TB)) string {
	tb := &fatalTB{}
	done := make(chan struct{})
	go func() { defer close(done); f(tb) }()
	<-done
	return tb.msg
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	msg := run(func(tb testing.TB) {
		Eventually(tb, time.Minute, func() error {
			if calls++; calls < 3 {
				return errors.New("not yet")
			}
			return nil
		})
	})
	if msg != "" || calls != 3 {
		t.Fatalf("failed with %q after %d calls, want success on the 3rd", msg, calls)
	}
}

func TestEventuallyFailsWithTheLastStateSeen(t *testing.T) {
	n := 0
	msg := run(func(tb testing.TB) {
		Eventually(tb, 20*time.Millisecond, func() error { n++; return fmt.Errorf("seen %d", n) })
	})
	if !strings.Contains(msg, fmt.Sprintf("seen %d", n)) || !strings.Contains(msg, "20ms") {
		t.Fatalf("failure %q, want the limit and the last state (seen %d)", msg, n)
	}
	if msg := run(func(tb testing.TB) { Until(tb, time.Millisecond, "the door opens", func() bool { return false }) }); !strings.Contains(msg, "the door opens") {
		t.Fatalf("Until's failure %q does not name its condition", msg)
	}
}
