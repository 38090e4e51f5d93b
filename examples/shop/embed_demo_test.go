package shop_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/static"
)

// TestEmbedDemo: the example shop lets itself frame the room, keeping the
// room's other embedders, and serves the page that loads the SDK.
func TestEmbedDemo(t *testing.T) {
	keys, _ := token.Generate()
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys, queue.LineOptions{})
	s := queue.DefaultSettings()
	s.AllowedEmbedders = []string{"https://kept.example"}
	if err := line.PutRoom(context.Background(), "demo", s); err != nil {
		t.Fatal(err)
	}
	demo, err := shop.StartEmbedDemo(context.Background(), line, shop.EmbedDemoConfig{
		Addr: "127.0.0.1:0", WaitroomURL: "http://127.0.0.1:8080", Room: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Close()
	port := strings.TrimPrefix(demo.URL, "http://localhost:")
	s, _ = line.Settings(context.Background(), "demo")
	if want := []string{"https://kept.example", "http://localhost:" + port, "http://127.0.0.1:" + port}; strings.Join(s.AllowedEmbedders, " ") != strings.Join(want, " ") {
		t.Errorf("allowed_embedders %v, want %v", s.AllowedEmbedders, want)
	}
	res, err := http.Get(strings.Replace(demo.URL, "localhost", "127.0.0.1", 1) + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("demo page: %d %v", res.StatusCode, err)
	}
	if src, _ := doc.Find(`script[src="http://127.0.0.1:8080/static/waitroom-embed.js"]`).Attr("src"); src == "" {
		t.Error("the demo does not load the SDK from its stable URL")
	}
	if room, _ := doc.Find("[data-embed-demo]").Attr("data-room"); room != "demo" {
		t.Errorf("demo embeds room %q", room)
	}
	// The page's own script is the shop's: waitroom's binary does not ship it.
	src, _ := doc.Find(`script[src="/embed-demo.js"]`).Attr("src")
	rec := httptest.NewRecorder()
	shop.EmbedDemoHandler("http://x", "demo").ServeHTTP(rec, httptest.NewRequest("GET", src, nil))
	if body := rec.Body.String(); src == "" || rec.Code != 200 || !strings.Contains(body, "data-embed-demo") ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
		t.Errorf("the demo's script %q: %d %q", src, rec.Code, body[:min(len(body), 80)])
	}
	if static.Path("embed-demo.js") != static.Prefix+"embed-demo.js" { // an unhashed path: no such asset
		t.Errorf("waitroom's static assets still hold embed-demo.js: %s", static.Path("embed-demo.js"))
	}
	rec = httptest.NewRecorder()
	shop.EmbedDemoHandler("http://x", "demo").ServeHTTP(rec, httptest.NewRequest("GET", "/elsewhere", nil))
	if body, _ := io.ReadAll(rec.Body); rec.Code != 404 {
		t.Errorf("demo /elsewhere: %d %s", rec.Code, body)
	}
}
