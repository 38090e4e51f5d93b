package shop

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// embedDemoJS is the page's script, built from embed-demo.ts by npm run build.
//
//go:embed dist/embed-demo.js
var embedDemoJS []byte

// EmbedDemoHandler serves an example shop page that embeds room's line from
// the waitroom at waitroomURL with the SDK, as docs/embedding.md tells shops to.
func EmbedDemoHandler(waitroomURL, room string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/embed-demo.js" { // the page's own script: the shop's, not waitroom's
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
			_, _ = w.Write(embedDemoJS)
			return
		}
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_ = embedDemoPage(embedDemoProps{WaitroomURL: waitroomURL, Room: room}).Render(r.Context(), w)
	})
}

// embedDemoProps are the example shop page that embeds a room.
type embedDemoProps struct {
	WaitroomURL string // where waitroom is, for the SDK's script and server option
	Room        string
}

// EmbedDemoConfig says where the example shop listens and what it embeds.
type EmbedDemoConfig struct {
	Addr        string // loopback host:port
	WaitroomURL string
	Room        string
	Logger      *slog.Logger
}

// EmbedDemo is the example shop, running.
type EmbedDemo struct {
	URL string
	srv *http.Server
}

// embedderRooms is what the demo needs of the line: to let itself frame the room.
type embedderRooms interface {
	Settings(ctx context.Context, room string) (queue.Settings, error)
	PutRoom(ctx context.Context, room string, s queue.Settings) error
}

// StartEmbedDemo serves the example shop on cfg.Addr and adds its origins to
// the room's allowed_embedders. Its URL names the other loopback host than
// the waitroom's (localhost against 127.0.0.1), so the shop and the line are
// different sites, as they are in production, and the frame's cookies are
// third-party ones.
func StartEmbedDemo(ctx context.Context, rooms embedderRooms, cfg EmbedDemoConfig) (*EmbedDemo, error) {
	wr, err := url.Parse(cfg.WaitroomURL)
	if err != nil {
		return nil, fmt.Errorf("embed demo: waitroom URL: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("embed demo: %w", err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	host := "localhost"
	if wr.Hostname() == "localhost" {
		host = "127.0.0.1"
	}
	d := &EmbedDemo{URL: "http://" + net.JoinHostPort(host, port)}
	s, err := rooms.Settings(ctx, cfg.Room)
	if err == nil {
		for _, o := range []string{"http://localhost:" + port, "http://127.0.0.1:" + port} {
			if !slices.Contains(s.AllowedEmbedders, o) {
				s.AllowedEmbedders = append(s.AllowedEmbedders, o)
			}
		}
		err = rooms.PutRoom(ctx, cfg.Room, s)
	}
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("embed demo: allow it to frame room %s: %w", cfg.Room, err)
	}
	d.srv = &http.Server{Handler: EmbedDemoHandler(cfg.WaitroomURL, cfg.Room), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := d.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && cfg.Logger != nil {
			cfg.Logger.Warn("embed demo stopped", "err", err)
		}
	}()
	if cfg.Logger != nil {
		cfg.Logger.Info("embed demo: an example shop on another origin with the line embedded", "url", d.URL+"/")
	}
	return d, nil
}

// Close stops the example shop.
func (d *EmbedDemo) Close() error { return d.srv.Close() }
