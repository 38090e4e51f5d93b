//go:build !noembedded

package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// demoRoom points the embedded demo room at the demo shop.
func demoRoom(s *queue.Settings) {
	s.TargetURL = "/shop"
	s.ProductID = shop.DropID
	s.ProductName = queue.TextByLang(map[string]string{"en": shop.DropName, "ko": "한정판 스니커즈"})
	// The demo shop verifies tokens offline (JWKS) and never tells waitroom
	// its visitor came: an arrival window would free slots still in use.
	s.ArrivalWindowS = 0
}

// demo is the demo shop running: its checkout at /shop, its consumer of the
// intents topic and the embed demo page.
type demo struct {
	shop  *shop.Shop
	embed *shop.EmbedDemo
}

// startDemo mounts the demo checkout (examples/shop) at /shop. It reaches
// the waiting room the way a real shop would, over HTTP at the address this
// server listens on, and takes degraded-mode intents from the embedded Kafka
// at its own pace; its stock is one, shared by both paths. Config allows it
// in embedded mode only: on a real broker it would consume the real intents.
func startDemo(ctx context.Context, srv *server.Server, rooms *queue.Line, cfg config, listenAddr string, brokers []string, auth outbox.KafkaAuth, log *slog.Logger) (*demo, error) {
	sh, err := shop.Open(ctx, shop.Config{
		WaitroomURL: "http://" + listenAddr, Issuer: cfg.PublicURL, Room: "demo", Logger: log,
		DataDir: cfg.DataDir, KafkaBrokers: brokers,
		IntentsTopic: cfg.KafkaTopic, ResultsTopic: cfg.KafkaResultsTopic, KafkaAuth: auth,
	})
	if err != nil {
		return nil, fmt.Errorf("demo: shop: %w", err)
	}
	shopHandler := sh.Handler()
	for _, p := range shop.Paths {
		srv.MountHandler(shopHandler, p.Method, p.Path, p.Purpose)
	}
	d := &demo{shop: sh}
	if cfg.EmbedDemoAddr != "" {
		d.embed, err = shop.StartEmbedDemo(ctx, rooms, shop.EmbedDemoConfig{
			Addr: cfg.EmbedDemoAddr, WaitroomURL: cfg.PublicURL, Room: "demo", Logger: log})
		if err != nil {
			log.Warn("no embed demo", "err", err) // a convenience: the demo runs without it
		}
	}
	log.Info("demo shop on /shop: embedded mode only", "url", cfg.PublicURL+"/shop", "consumer_group", shop.DefaultGroupID)
	return d, nil
}

// run takes the demo's intents until ctx ends.
func (d *demo) run(ctx context.Context) error { return d.shop.RunConsumer(ctx) }

func (d *demo) Close() error {
	if d.embed != nil {
		_ = d.embed.Close()
	}
	return d.shop.Close()
}
