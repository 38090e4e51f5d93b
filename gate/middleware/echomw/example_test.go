package echomw_test

import (
	"log"
	"net/http"
	"os"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/gate/middleware"
	"github.com/waitroom/waitroom/gate/middleware/echomw"
)

// The same for an echo server, on a group of routes only.
func ExampleMiddleware() {
	gate, err := echomw.Middleware(middleware.Config{
		WaitroomURL: "https://wait.example.com",
		Room:        "drop",
		// The room's shop key: GET /admin/api/rooms/drop/shop-key.
		Credential: os.Getenv("WAITROOM_SHOP_KEY"),
		Complete:   []string{"/checkout/orders"},
		Secure:     true,
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
