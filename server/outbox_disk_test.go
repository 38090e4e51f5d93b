//go:build linux

package server_test

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
)

// TestFailingDiskRefusesIntentsWith503: the outbox's disk really refuses
// writes: RLIMIT_FSIZE 0 makes the kernel fail every write to a regular file
// with EFBIG, as a full disk fails with ENOSPC (no root, no mount). The
// limit is the whole process's, so the test runs in a child process of its
// own; redis-server starts before the limit and keeps its own.
//
// While the disk fails: an intent answers 503 outbox_unavailable with
// Retry-After, the accept form comes back 503 with "try again in a moment"
// and the quantity chosen, /readyz is 503 naming the outbox, and each
// refused write is counted. When the disk takes writes again, /readyz is
// 200 by itself and the same visitor's intent is taken.
func TestFailingDiskRefusesIntentsWith503(t *testing.T) {
	t.Parallel()
	if os.Getenv("WAITROOM_FAILING_DISK_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFailingDiskRefusesIntentsWith503$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "WAITROOM_FAILING_DISK_CHILD=1")
		out, err := cmd.CombinedOutput()
		if strings.Contains(string(out), "--- SKIP") {
			t.Skip("child skipped: " + lastLines(string(out), 3))
		}
		if err != nil || !strings.Contains(string(out), "--- PASS: TestFailingDiskRefusesIntentsWith503") {
			t.Fatalf("child: %v\n%s", err, lastLines(string(out), 40))
		}
		return
	}

	e := newDegradedEnv(t)
	e.putRoom("sale", `{"product_id": "drop", "max_quantity": 4}`)
	waitCached(t, e)
	early, late := e.browser(), e.browser()
	for _, c := range []*http.Client{early, late} {
		if r := e.do(c, "POST", "/api/rooms/sale/enter", ""); r.status != 200 {
			t.Fatalf("enter: %d %s", r.status, r.raw)
		}
	}
	drill(t, []*degradedEnv{e}, true)
	if r := e.do(early, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`); r.status != 202 {
		t.Fatalf("intent before the disk fails: %d %s", r.status, r.raw)
	}

	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 0, Max: was.Max}); err != nil {
		t.Skipf("cannot limit file sizes here: %v", err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer restore()

	r := e.do(late, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 2}}`)
	wantError(t, r, 503, "outbox_unavailable")
	if ra := r.header.Get("Retry-After"); ra != "5" {
		t.Errorf("Retry-After %q, want 5", ra)
	}
	if n := e.ob.WriteFailures(); n < 1 {
		t.Errorf("write failures counted: %d", n)
	}
	ready := e.do(nil, "GET", "/readyz", "")
	if ready.status != 503 || ready.body["outbox"] == "ok" || ready.body["outbox"] == nil || ready.header.Get("Retry-After") == "" {
		t.Fatalf("/readyz while the disk fails: %d %s", ready.status, ready.raw)
	}
	page := e.do(late, "POST", "/rooms/sale/accept", "quantity=3", "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	if page.status != 503 || page.header.Get("Retry-After") != "5" ||
		!strings.Contains(page.raw, "Try again in a moment") || !strings.Contains(page.raw, `value="3" selected`) ||
		!strings.Contains(page.raw, `data-retry-after="5"`) {
		t.Fatalf("accept form while the disk fails: %d %s", page.status, page.raw)
	}

	restore()
	testkit.Eventually(t, 15*time.Second, func() error { // the outbox probes once a second: nothing to await
		if r := e.do(nil, "GET", "/readyz", ""); r.status == 200 && r.body["outbox"] == "ok" {
			return nil
		}
		return errors.New("/readyz never came back once the disk took writes")
	})
	if r := e.do(late, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 2}}`); r.status != 202 {
		t.Fatalf("intent once the disk takes writes: %d %s", r.status, r.raw)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
