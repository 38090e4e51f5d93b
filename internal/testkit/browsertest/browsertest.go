// Package browsertest finds what the browser tests need (Debian's Chromium,
// node, playwright-core from package.json) and runs one Chromium per test
// process that every script connects to (web/e2e/browser-server.mjs),
// rather than one per script. A test whose pieces are missing skips, saying
// what to install, unless WAITROOM_REQUIRE_BROWSER=1 (CI) fails it instead.
package browsertest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// Chromium is Debian's chromium, the browser the tests drive.
	Chromium = "/usr/bin/chromium"
	// RequireEnv makes a missing piece a failure rather than a skip.
	RequireEnv = "WAITROOM_REQUIRE_BROWSER"
)

// Kit is what running a script needs: the repository root (node_modules,
// web/e2e) and node.
type Kit struct {
	Root, Node string
}

// Need returns the kit for the repository at root, or skips the test: under
// -short (browsers are not in the fast tier) and where a piece is missing.
func Need(t testing.TB, root string) Kit {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: Chromium and node are not part of the fast tier (-short)")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	if _, err := os.Stat(Chromium); err != nil {
		missing = append(missing, Chromium+" (apt-get install chromium)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node on PATH")
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "node_modules/playwright-core (npm ci)")
	}
	if len(missing) > 0 {
		msg := "browser tests need " + strings.Join(missing, ", ")
		if os.Getenv(RequireEnv) == "1" {
			t.Fatal(msg + "; " + RequireEnv + "=1 makes that a failure")
		}
		t.Skip(msg + "; set " + RequireEnv + "=1 to fail instead of skipping")
	}
	return Kit{Root: root, Node: node}
}

// Env is the environment a script adds to find its browser: CHROMIUM, and
// BROWSER_WS naming the shared browser once it runs. Where the shared
// browser cannot start, the script launches its own (logged), so a test
// never fails for the sharing alone.
func (k Kit) Env(t testing.TB) []string {
	t.Helper()
	env := []string{"CHROMIUM=" + Chromium}
	ws, err := k.shared()
	if err != nil {
		t.Logf("browsertest: no shared browser, the script starts its own: %v", err)
		return env
	}
	return append(env, "BROWSER_WS="+ws)
}

// shared is the one browser server of this process. It lives until the
// process exits: its stdin is a pipe only this process holds, and the
// server closes Chromium when that pipe closes.
var shared struct {
	once sync.Once
	ws   string
	err  error
}

func (k Kit) shared() (string, error) {
	shared.once.Do(func() { shared.ws, shared.err = k.startServer() })
	return shared.ws, shared.err
}

func (k Kit) startServer() (string, error) {
	cmd := exec.Command(k.Node, filepath.Join(k.Root, "web", "e2e", "browser-server.mjs"))
	cmd.Dir = k.Root
	cmd.Env = append(os.Environ(), "CHROMIUM="+Chromium)
	cmd.Stderr = os.Stderr
	// Never closed by us: the pipe's end is the server's signal to stop.
	if _, err := cmd.StdinPipe(); err != nil {
		return "", fmt.Errorf("browsertest: stdin: %w", err)
	}
	line := make(chan string, 1)
	cmd.Stdout = &firstWS{found: line}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("browsertest: start browser server: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	select {
	case ws := <-line:
		return ws, nil
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return "", fmt.Errorf("browsertest: the browser server did not start within 60 s")
	}
}

// firstWS passes on the endpoint of the first "WS <endpoint>" line and
// drops the rest of the output.
type firstWS struct {
	buf   []byte
	found chan<- string
}

func (f *firstWS) Write(p []byte) (int, error) {
	if f.found == nil {
		return len(p), nil
	}
	f.buf = append(f.buf, p...)
	if len(f.buf) > 1<<16 { // no endpoint line this long: keep looking in what comes next
		f.buf = f.buf[len(f.buf)-1<<10:]
	}
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l := string(f.buf[:i])
		f.buf = f.buf[i+1:]
		if ws, ok := strings.CutPrefix(l, "WS "); ok {
			f.found <- ws
			f.found, f.buf = nil, nil
			return len(p), nil
		}
	}
}
