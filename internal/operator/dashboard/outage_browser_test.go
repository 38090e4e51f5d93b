package dashboard_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// TestOutageReplacesLiveInChromium: a room page live over WebSocket; Redis
// dies; the connection line stops saying "Live" and says Redis is down, in
// English and Korean (screenshots at 390 and 1280 px).
func TestOutageReplacesLiveInChromium(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	root, node := kit.Root, kit.Node
	srv := redistest.Start(t)
	// No availability flag: the dashboard's own reading of Redis (its
	// sampler) says whether it is up.
	site := newSite(t, siteOptions{rdb: srv.Client(t), deps: func(d *dashboard.Deps) { d.Avail = nil }})
	site.putRoom("drop", queue.DefaultSettings())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "admin_outage.mjs"))
	cmd.Env = append(os.Environ(), "BASE_URL="+site.url, "ADMIN_TOKEN="+adminToken, "ROOM=drop",
		"OUT_DIR="+filepath.Join(root, "test-output", "browser"))
	cmd.Env = append(cmd.Env, kit.Env(t)...)
	var result []byte
	cmd.Stdout = &lineWriter{line: func(l string) {
		switch {
		case l == "LIVE":
			srv.Kill()
		case strings.HasPrefix(l, "RESULT "):
			result = []byte(strings.TrimPrefix(l, "RESULT "))
		default:
			t.Log("admin_outage.mjs: " + l)
		}
	}}
	cmd.Stderr = &lineWriter{line: func(l string) { t.Log("admin_outage.mjs! " + l) }}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("admin_outage.mjs failed: %v (see its FAIL line above)", err)
	}
	var r struct {
		Before string
		Texts  map[string]string
		Files  []struct {
			File  string
			Width int
		}
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("RESULT %s: %v", result, err)
	}
	if r.Before != templates.T(templates.English, "admin.conn.ws") {
		t.Errorf("before the outage: %q", r.Before)
	}
	for _, lang := range []templates.Lang{templates.English, templates.Korean} {
		prefix, _, _ := strings.Cut(templates.T(lang, "admin.conn.outage"), "{time}")
		if got := r.Texts[string(lang)]; !strings.HasPrefix(got, prefix) || len(got) <= len(prefix) {
			t.Errorf("%s during the outage: %q, want %q and a time", lang, got, prefix)
		}
	}
	for _, f := range r.Files {
		checkPNG(t, f.File, f.Width)
	}
}
