package middleware_test

import (
	"log"
	"net/http"
	"os"

	"github.com/waitroom/waitroom/gate/middleware"
)

// A shop's net/http server: /checkout/* and POST /api/orders need an entry
// token of room "drop"; a 2xx from /api/orders hands the slot back. The
// room's target_url is https://shop.example.com/checkout/.
func ExampleNew() {
	gate, err := middleware.New(middleware.Config{
		WaitroomURL: "https://wait.example.com",
		Room:        "drop",
		// The room's shop key: GET /admin/api/rooms/drop/shop-key.
		Credential: os.Getenv("WAITROOM_SHOP_KEY"),
		Protect:    []string{"/checkout/*", "/api/orders"},
		Complete:   []string{"/api/orders"},
		Secure:     true,
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux() // the shop's own routes
	log.Fatal(http.ListenAndServe(":8081", gate(mux)))
}
