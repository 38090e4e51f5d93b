package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/waitroom/waitroom/queue/outbox"
	"github.com/waitroom/waitroom/server"
	"github.com/waitroom/waitroom/server/shop"
)

// openShop starts the demo checkout at /shop. It reaches the waiting room the
// way a real shop would, over HTTP at the address this server listens on,
// and takes degraded-mode intents from Kafka at its own pace. Its stock is
// one, shared by both paths.
func openShop(ctx context.Context, srv *server.Server, cfg config, listenAddr string, brokers []string, auth outbox.KafkaAuth, log *slog.Logger) (*shop.Shop, error) {
	sh, err := shop.Open(ctx, shop.Config{
		WaitroomURL: "http://" + listenAddr, Room: "demo", Logger: log,
		DataDir: cfg.DataDir, KafkaBrokers: brokers,
		IntentsTopic: cfg.KafkaTopic, ResultsTopic: cfg.KafkaResultsTopic, KafkaAuth: auth,
	})
	if err != nil {
		return nil, fmt.Errorf("shop: %w", err)
	}
	srv.MountShop(sh.Handler()) // its rows: server/routes.go's shopRoutes
	return sh, nil
}
