package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeSale runs every command of the README's "Run a sale in 5
// minutes" against a freshly started server (the built binary in embedded
// mode, on a free port, standing for `go run ./cmd/waitroom &`), in order,
// each in bash with the variables the section exports.
func TestReadmeSale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	cmds := readmeSaleCommands(t)
	bin := buildBinary(t)
	loadgen := filepath.Join(t.TempDir(), "loadgen")
	if out, err := exec.Command("go", "build", "-o", loadgen, "../loadgen").CombinedOutput(); err != nil {
		t.Fatalf("build loadgen: %v\n%s", err, out)
	}
	tokenOut, err := exec.Command(bin, "--create-admin-token").Output()
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tokenOut))
	p := startBinary(t, bin, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--admin-token", token,
		"--embed-demo-addr", "off", "--log-format", "json")
	wr := "http://" + p.addr

	env := append(os.Environ(), "WAITROOM_ADMIN_TOKEN="+token, "WR="+wr, "AUTH=Authorization: Bearer "+token)
	ran := 0
	for _, c := range cmds {
		switch {
		case strings.Contains(c, "go run ./cmd/waitroom"), strings.HasPrefix(c, "export WR="):
			continue // the server and the variables: started and set above
		}
		c = strings.ReplaceAll(c, "go run ./cmd/loadgen", loadgen)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", c)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README command failed: %s\n%v\n%s", c, err, out)
		}
		ran++
		t.Logf("$ %s\n%s", c, firstLines(string(out), 3))
	}
	if ran < 6 {
		t.Fatalf("ran %d of the section's commands: %q", ran, cmds)
	}
	// The sale happened: the room exists, visitors came, it is sold out.
	req, _ := http.NewRequest("GET", wr+"/admin/api/rooms/drop/stats", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	_ = json.NewDecoder(res.Body).Decode(&st)
	res.Body.Close()
	if res.StatusCode != 200 || st["entered_total"] == nil || st["entered_total"].(float64) < 1 {
		t.Errorf("stats after the sale: %d %v, want visitors entered", res.StatusCode, st)
	}
}

// readmeSaleCommands are the indented command lines of the README's "Run a
// sale in 5 minutes" section.
func readmeSaleCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			in = l == "## Run a sale in 5 minutes"
			continue
		}
		if in && strings.HasPrefix(l, "    ") && !strings.HasPrefix(strings.TrimSpace(l), "|") {
			cmds = append(cmds, strings.TrimSpace(l))
		}
	}
	if len(cmds) == 0 {
		t.Fatal(`README has no commands under "## Run a sale in 5 minutes"`)
	}
	return cmds
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
