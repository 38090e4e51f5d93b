package server

import (
	"crypto/subtle"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
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

// errCredentialForbidden: a verify without holder sent a credential that
// is not the shop's (a shop with a wrong key would otherwise see its
// visitors' slots lapse as no-shows, its verifies not counting as arrivals).
var errCredentialForbidden = &apiError{Status: http.StatusForbidden, Code: "credential_forbidden",
	Message: "Authorization: the credential sent is neither this room's shop key nor the admin token; send none to only check the token"}

// check answers nil when the request bears room's shop key or the admin token.
func (a shopAuth) check(c echo.Context, room string) error {
	got := bearer(c)
	if got == "" {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="waitroom-shop"`)
		return errHolderUnauthenticated
	}
	if !a.valid(got, room) {
		return errHolderForbidden
	}
	return nil
}

// valid reports whether got is room's shop key or the admin token.
func (a shopAuth) valid(got, room string) bool {
	if a.adminToken != "" && subtle.ConstantTimeCompare([]byte(got), []byte(a.adminToken)) == 1 {
		return true
	}
	return room != "" && a.keys.IsShopKey(room, got)
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
