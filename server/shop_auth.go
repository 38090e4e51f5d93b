package server

import (
	"crypto/subtle"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/gatekit"
)

// shopKeys tells a room's shop credential (token.Keyset).
type shopKeys interface {
	ShopKey(room string) string
	IsShopKey(room, key string) bool
}

// shopAuth decides who may bind a token to a holder (POST /api/tokens/verify
// with holder, POST /api/tokens/redeem with holder): the shop, by the
// room's shop key or the admin token as Authorization: Bearer. Anyone else
// holding a copy of a token could otherwise bind it to themselves first and
// lock its owner out of checkout.
type shopAuth struct {
	keys       shopKeys
	adminToken string
}

var (
	errHolderUnauthenticated = &apiError{Status: http.StatusUnauthorized, Code: "holder_unauthenticated", Field: "holder",
		Message: "holder: binding a token to a holder takes the room's shop key (GET /admin/api/rooms/{room}/shop-key) or the admin token as Authorization: Bearer"}
	errHolderForbidden = &apiError{Status: http.StatusForbidden, Code: "holder_forbidden", Field: "holder",
		Message: "holder: the credential sent is neither this room's shop key nor the admin token"}
)

// check answers nil when the request bears room's shop key or the admin token.
func (a shopAuth) check(c echo.Context, room string) error {
	got := bearer(c)
	if got == "" {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="waitroom-shop"`)
		return errHolderUnauthenticated
	}
	if a.adminToken != "" && subtle.ConstantTimeCompare([]byte(got), []byte(a.adminToken)) == 1 {
		return nil
	}
	if room != "" && a.keys.IsShopKey(room, got) {
		return nil
	}
	return errHolderForbidden
}

// roomOf is the room a token names (aud), unverified: only to pick whose
// shop key to expect. Hold verifies the token, its room included, after.
func roomOf(tok string) string {
	c, err := gatekit.Peek(tok)
	if err != nil || len(c.Audience) != 1 {
		return ""
	}
	return c.Audience[0]
}

// handleShopKey: GET /admin/api/rooms/:room/shop-key, the credential a
// shop's server (the Go middleware's Credential) binds tokens with.
func handleShopKey(keys shopKeys) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, map[string]string{"room": room, "shop_key": keys.ShopKey(room)})
	}
}
