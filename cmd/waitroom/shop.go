package main

import (
	"context"
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/server"
	"github.com/waitroom/waitroom/server/shop"
)

// mountShop adds the demo checkout at /shop. It reaches the waiting room the
// way a real shop would, over HTTP, at the address this server listens on.
func mountShop(ctx context.Context, srv *server.Server, listenAddr string, log *slog.Logger) {
	h := echo.WrapHandler(shop.New(ctx, shop.Config{WaitroomURL: "http://" + listenAddr, Room: "demo", Logger: log}).Handler())
	srv.Echo().GET("/shop", h)
	srv.Echo().POST("/shop/complete", h)
}
