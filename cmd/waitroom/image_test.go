package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/testkit/tooltest"
)

// TestImageRuns builds the image the Dockerfile describes (its `prebuilt`
// stage, from scripts/release.sh image-root: nothing is pulled, so Debian's
// podman builds it offline) and runs it as uid 65532 on the host network
// against a real redis-server and a Kafka-protocol broker on the host: the
// signing key is made on the mounted /data volume, /readyz answers, a visitor
// enters, and the outbox's file is on the volume.
func TestImageRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a container image")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	podman := tooltest.Need(t, "podman", "Debian's podman, with runc: apt-get install podman runc")
	runc := "/usr/sbin/runc"
	if _, err := os.Stat(runc); err != nil {
		tooltest.Missing(t, "runc at /usr/sbin/runc (apt-get install runc)")
	}
	store, err := os.MkdirTemp("", "waitroom-image-")
	if err != nil {
		t.Fatal(err)
	}
	// Registered first, so it runs last: once the container is removed,
	// podman's own cleanup process (conmon's exit command) can still be
	// writing to the store, and one RemoveAll (t.TempDir's) then met a
	// directory that was not empty.
	t.Cleanup(func() {
		testkit.Eventually(t, 30*time.Second, func() error { return os.RemoveAll(store) })
	})
	pod := func(args ...string) *exec.Cmd {
		// A private store: nothing of the machine's podman is touched.
		base := []string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"),
			"--storage-driver", "vfs", "--runtime", runc}
		return exec.Command(podman, append(base, args...)...)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := pod(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	ctx := t.TempDir()
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	if out, err := exec.Command(filepath.Join(repo, "scripts", "release.sh"), "image-root", filepath.Join(ctx, "dist", "image")).CombinedOutput(); err != nil {
		t.Fatalf("release.sh image-root: %v\n%s", err, out)
	}
	run("build", "--target", "prebuilt", "-f", filepath.Join(repo, "Dockerfile"), "-t", "localhost/waitroom:test", ctx)

	data := t.TempDir()
	if err := os.Chmod(data, 0o777); err != nil { // the container's user writes here
		t.Fatal(err)
	}
	container := []string{"run", "--rm", "--network", "host", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
		"--user", "65532:65532", "-v", data + ":/data"}
	if v := run(append(container, "localhost/waitroom:test", "--version")...); !strings.Contains(v, "waitroom") {
		t.Fatalf("--version answered %q", v)
	}
	run(append(container, "localhost/waitroom:test", "--create-signing-key")...)

	rs := redistest.Start(t)
	broker := kafkatest.Start(t, outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic)
	addr := tooltest.FreeAddr(t)
	const token = "3f9a0c6d2b8e4f1a7c5e9d0b2a4c6e8f"
	name := "waitroom-test-" + filepath.Base(data)
	args := append(append([]string{}, container...), "--name", name, "localhost/waitroom:test",
		"--addr", addr, "--redis-url", rs.URL(), "--kafka-brokers", strings.Join(broker.Addrs(), ","), "--admin-token", token)
	srv := pod(args...)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = pod("rm", "-f", name).Run()
		_ = srv.Wait()
	})
	base := "http://" + addr
	testkit.Until(t, 60*time.Second, "the container answers /readyz 200", func() bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	if r := call(t, http.DefaultClient, "PUT", base+"/admin/api/rooms/sale", token, `{"bot_protection": {"proof_of_work": "off"}}`); r.status != http.StatusCreated {
		t.Fatalf("create room: %d %v", r.status, r.body)
	}
	if r := call(t, http.DefaultClient, "POST", base+"/api/rooms/sale/enter", "", ""); r.status/100 != 2 || r.body["ticket"] == nil {
		t.Fatalf("enter: %d %v", r.status, r.body)
	}
	for _, f := range []string{"signing-key.pem", outbox.FileName} {
		if _, err := os.Stat(filepath.Join(data, f)); err != nil {
			t.Errorf("%s is not on the mounted /data volume: %v", f, err)
		}
	}
}
