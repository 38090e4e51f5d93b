package server

import (
	"net/http"

	"github.com/golang-jwt/jwt/v5"
	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// NoCheckoutPath is the page a room's default target_url points at: a room
// whose operator has not yet said where its checkout is.
const NoCheckoutPath = "/checkout-not-configured"

// NoCheckoutPage serves GET NoCheckoutPath[?room=…][&wr_token=…]. The room
// comes from ?room= or, as admitted visitors arrive, from the token's
// audience; it is only shown, so the token is read without verifying it,
// and a value that is not a room id is not shown at all.
func NoCheckoutPage(c echo.Context) error {
	room := c.QueryParam("room")
	if room == "" {
		var claims jwt.RegisteredClaims
		if _, _, err := jwt.NewParser().ParseUnverified(c.QueryParam("wr_token"), &claims); err == nil && len(claims.Audience) == 1 {
			room = claims.Audience[0]
		}
	}
	if !queue.ValidRoomID(room) {
		room = ""
	}
	// The token is in the address: links from here must not carry it on.
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return render.Page(c, http.StatusOK, templates.NoCheckoutPage(pageLang(c), room))
}
