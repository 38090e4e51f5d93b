package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/tooltest"
)

// TestAcceptPageRecoversBehindTheShippedProxies: the built binary behind a
// real nginx running deploy/nginx/waitroom.conf, then deploy/compose's
// nginx.conf. A visitor in line is sent to the accept page when degraded
// mode starts (an operator's drill); when it ends, the page's way back
// (GET /api/rooms/{room}/mode, as web/accept.ts asks it) answers "normal"
// through the proxy, and the page's line URL leads back to the line: the
// waiting page, the ticket waiting again. The Traefik file routes the same
// path to waitroom (read, not run: no Traefik here).
func TestAcceptPageRecoversBehindTheShippedProxies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and nginx")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	tooltest.Need(t, "/usr/sbin/nginx", "apt-get install nginx")
	const token = "proxy-test-admin-token-0123456789ab"
	p, _ := startOnRedis(t, buildBinary(t), "--admin-token", token)
	direct := "http://" + p.addr
	admin := &http.Client{Timeout: 10 * time.Second}
	if r := call(t, admin, "PUT", direct+"/admin/api/rooms/demo", token,
		`{"capacity": 1, "batch_size": 1, "batch_interval_ms": 60000, "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	upstream := regexp.MustCompile(`(?s)upstream waitroom \{.*?\n\}`)
	checkout := regexp.MustCompile(`(?s)upstream checkout \{.*?\n\}`)
	lineURL := regexp.MustCompile(`data-line-url="([^"]+)"`)
	for _, file := range []string{"nginx/waitroom.conf", "compose/nginx.conf"} {
		t.Run(strings.ReplaceAll(file, "/", "_"), func(t *testing.T) {
			site := string(readDeploy(t, file))
			listen := tooltest.FreeAddr(t)
			for re, to := range map[*regexp.Regexp]string{
				upstream: "upstream waitroom {\n    server " + p.addr + ";\n}",
				checkout: "upstream checkout {\n    server " + tooltest.FreeAddr(t) + ";\n}",
			} {
				if !re.MatchString(site) {
					t.Fatalf("%s: no %s block to point at the test's servers", file, re)
				}
				site = re.ReplaceAllString(site, to)
			}
			if !strings.Contains(site, "listen 80;") {
				t.Fatalf("%s: no listen 80", file)
			}
			site = strings.Replace(site, "listen 80;", "listen "+listen+";", 1)
			tooltest.StartNginx(t, site, listen)
			proxy := "http://" + listen

			jar, _ := cookiejar.New(nil)
			v := &http.Client{Jar: jar, Timeout: 10 * time.Second}
			r := call(t, v, "POST", proxy+"/api/rooms/demo/enter", "", "")
			ticket, _ := r.body["ticket"].(string)
			if r.status != 200 || ticket == "" {
				t.Fatalf("enter through nginx: %d %v", r.status, r.body)
			}
			drill := func(on bool) {
				body := `{"on": false}`
				if on {
					body = `{"on": true}`
				}
				if r := call(t, admin, "POST", direct+"/admin/api/degrade", token, body); r.status != 200 {
					t.Fatalf("drill %v: %d %v", on, r.status, r.body)
				}
			}
			drill(true)
			t.Cleanup(func() { drill(false) })
			r = call(t, v, "GET", proxy+"/api/rooms/demo/tickets/"+ticket, "", "")
			accept, _ := r.body["accept_url"].(string)
			if r.status != 200 || r.body["state"] != "bypassed" || accept == "" {
				t.Fatalf("ticket in degraded mode through nginx: %d %v", r.status, r.body)
			}
			page := get(t, v, proxy+accept)
			m := lineURL.FindStringSubmatch(page)
			if m == nil || !strings.Contains(page, `data-room="demo"`) {
				t.Fatalf("the accept page through nginx has no line URL or room:\n%s", page)
			}
			if r := call(t, v, "GET", proxy+"/api/rooms/demo/mode", "", ""); r.status != 200 || r.body["mode"] != "degraded" {
				t.Fatalf("mode through nginx during the drill: %d %v", r.status, r.body)
			}

			drill(false)
			// The page asks on a timer with backoff; here, until it says normal.
			testkit.Until(t, 20*time.Second, "mode normal through nginx", func() bool {
				r := call(t, v, "GET", proxy+"/api/rooms/demo/mode", "", "")
				return r.status == 200 && r.body["mode"] == "normal"
			})
			back := strings.ReplaceAll(m[1], "&amp;", "&")
			if page := get(t, v, proxy+back); strings.Contains(page, "data-accept") || !strings.Contains(page, ticket) {
				t.Fatalf("the line URL %s through nginx did not lead back to the waiting page of ticket %s:\n%.2000s", back, ticket, page)
			}
			if r := call(t, v, "GET", proxy+"/api/rooms/demo/tickets/"+ticket, "", ""); r.status != 200 || r.body["state"] == "bypassed" {
				t.Fatalf("the ticket after degraded mode, through nginx: %d %v", r.status, r.body)
			}
		})
	}

	// Traefik: the waitroom router's rule covers the page's path.
	traefik := string(readDeploy(t, "traefik/dynamic.yaml"))
	if !strings.Contains(traefik, "PathPrefix(`/api/`)") && !strings.Contains(traefik, "PathPrefix(`/api/rooms/`)") {
		t.Errorf("deploy/traefik/dynamic.yaml does not route /api/rooms/{room}/mode to waitroom")
	}
}

// get fetches a page and returns its body, failing unless it answers 200.
func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%.1000s", url, res.StatusCode, b)
	}
	return string(b)
}
