//go:build noembedded

package main

import (
	"context"
	"log/slog"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// Without embedded services there is no demo: config refuses embedded mode.

func demoRoom(*queue.Settings) {}

type demo struct{}

func startDemo(context.Context, *server.Server, *queue.Line, config, string, []string, outbox.KafkaAuth, *slog.Logger) (*demo, error) {
	return nil, errNotEmbedded
}

func (*demo) run(context.Context) error { return nil }

func (*demo) Close() error { return nil }
