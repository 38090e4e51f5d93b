package static

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, method, url string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	return rec
}

func TestPathHasContentHash(t *testing.T) {
	for _, name := range []string{"waiting.js", "waiting.css"} {
		p := Path(name)
		ext := name[strings.LastIndex(name, "."):]
		base := strings.TrimSuffix(name, ext)
		if !regexp.MustCompile(`^/static/` + base + `\.[0-9a-f]{8}\` + ext + `$`).MatchString(p) {
			t.Fatalf("Path(%q) = %q", name, p)
		}
		body, err := os.ReadFile("dist/" + name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		if want := hex.EncodeToString(sum[:])[:8]; !strings.Contains(p, "."+want+".") {
			t.Errorf("Path(%q) = %q, want hash %s of the file", name, p, want)
		}
	}
	if got := Path("nope.js"); got != "/static/nope.js" {
		t.Errorf("unknown name: %q", got)
	}
}

func TestHandlerServesHashedFiles(t *testing.T) {
	cases := map[string]string{
		"waiting.js":  "text/javascript; charset=utf-8",
		"waiting.css": "text/css; charset=utf-8",
	}
	for name, ctype := range cases {
		want, _ := os.ReadFile("dist/" + name)
		for _, url := range []string{Path(name), strings.TrimPrefix(Path(name), "/static")} {
			rec := get(t, http.MethodGet, url, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", url, rec.Code)
			}
			if got := rec.Header().Get("Content-Type"); got != ctype {
				t.Errorf("GET %s: Content-Type %q, want %q", url, got, ctype)
			}
			if got := rec.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
				t.Errorf("GET %s: Cache-Control %q", url, got)
			}
			if rec.Body.String() != string(want) {
				t.Errorf("GET %s: body differs from dist/%s", url, name)
			}
		}
	}
}

func TestHandlerRejectsUnknownAndStale(t *testing.T) {
	for _, url := range []string{
		"/static/waiting.js",          // unhashed
		"/static/waiting.00000000.js", // an old build's hash
		"/static/nope.1234abcd.js",
		"/static/",
		"/static/../static.go",
	} {
		if rec := get(t, http.MethodGet, url, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", url, rec.Code)
		}
	}
}

func TestHandlerConditionalHeadAndMethods(t *testing.T) {
	p := Path("waiting.js")
	etag := get(t, http.MethodGet, p, nil).Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if rec := get(t, http.MethodGet, p, map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", rec.Code)
	}
	rec := get(t, http.MethodHead, p, nil)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, body %d bytes, length %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
	rec = get(t, http.MethodPost, p, nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}
