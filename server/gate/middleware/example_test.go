package middleware_test

import (
	"log"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/server/gate/middleware"
)

// A shop's net/http server: /checkout/* and POST /api/orders need an entry
// token of room "drop"; a 2xx from /api/orders hands the slot back. The
// room's target_url is https://shop.example.com/checkout/.
func ExampleNew() {
	gate, err := middleware.New(middleware.Config{
		WaitroomURL: "https://wait.example.com",
		Room:        "drop",
		Protect:     []string{"/checkout/*", "/api/orders"},
		Complete:    []string{"/api/orders"},
		Secure:      true,
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux() // the shop's own routes
	log.Fatal(http.ListenAndServe(":8081", gate(mux)))
}

// The same for an echo server, on a group of routes only.
func ExampleEchoMiddleware() {
	gate, err := middleware.EchoMiddleware(middleware.Config{
		WaitroomURL: "https://wait.example.com",
		Room:        "drop",
		Complete:    []string{"/checkout/orders"},
		Secure:      true,
	})
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	checkout := e.Group("/checkout", gate) // no Protect: everything in the group
	checkout.POST("/orders", func(c echo.Context) error {
		// Waitroom-Ticket is set by the gate: a key for the order.
		return c.String(http.StatusCreated, "order for ticket "+c.Request().Header.Get("Waitroom-Ticket"))
	})
	log.Fatal(e.Start(":8081"))
}
