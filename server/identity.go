package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// visitorCookie holds the visitor's id, 32 hex characters (hexid): the
// identity of a shopper without a login. Ids this server draws carry a MAC
// (token.Keyset.NewVisitorID); any well-formed id is a visitor in the line.
const visitorCookie = "wr_vid"

// identities resolves who is asking: a shop's user token (HS256, signed with
// the room's user_secret) or the visitor cookie the server sets.
type identities struct {
	secure bool // cookies only over HTTPS when the public URL is https
	now    func() time.Time
	embed  bool // inside a shop's iframe: see embed_identity.go
	// vids draws visitor ids that it can later tell apart from made-up
	// ones (token.Keyset); nil draws plain random ids.
	vids visitorIDs
}

// visitorIDs draws and recognises the visitor ids waitroom hands out, and
// the marks of those that held a place (token.Keyset).
type visitorIDs interface {
	NewVisitorID() string
	IssuedVisitorID(id string) bool
	PlaceMark(room, vid string, at time.Time) string
	CheckPlaceMark(room, vid, mark string, now time.Time, maxAge time.Duration) bool
}

// roomReader is the narrow view identities need of the line.
type roomReader interface {
	Settings(ctx context.Context, room string) (queue.Settings, error)
}

// fromUserToken returns "u:<sub>" for a valid user token, or a 400 error.
func (ids identities) fromUserToken(s queue.Settings, userToken string) (string, error) {
	if s.UserSecret == "" {
		return "", &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "user_token", Message: "user_token: this room does not take user tokens"}
	}
	sub, err := token.ParseUserToken(userToken, s.UserSecret, ids.now())
	if err != nil {
		return "", &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "user_token", Message: "user_token: " + token.Reason(err)}
	}
	return "u:" + sub, nil
}

// forEnter returns the identity to enter with, setting a visitor cookie when
// the visitor has none.
func (ids identities) forEnter(c echo.Context, s queue.Settings, userToken string) (string, error) {
	if ids.embed {
		return ids.embedForEnter(c, s, userToken)
	}
	if userToken == "" {
		userToken = bearer(c)
	}
	if userToken != "" {
		return ids.fromUserToken(s, userToken)
	}
	if v := visitorID(c); v != "" {
		return queue.VisitorIdentity(v), nil
	}
	v := queue.RandomID()
	if ids.vids != nil {
		v = ids.vids.NewVisitorID()
	}
	c.SetCookie(&http.Cookie{
		Name: visitorCookie, Value: v, Path: "/", MaxAge: visitorCookieAge, HttpOnly: true,
		Secure: ids.secure, SameSite: http.SameSiteLaxMode,
	})
	c.Set(ctxNewVisitor, v)
	return queue.VisitorIdentity(v), nil
}

// visitorCookieAge is how long the visitor cookie, and a place mark, last (s).
const visitorCookieAge = 86400

// ctxNewVisitor holds the visitor id forEnter just drew (the request has
// no cookie yet).
const ctxNewVisitor = "waitroom.new_visitor"

// placeCookiePrefix + room holds the visitor's place mark for the room
// (token.Keyset.PlaceMark): proof, while Redis is down, that the visitor
// cookie beside it held a place in the line and was not just minted.
const placeCookiePrefix = "wr_place_"

// markPlace gives the visitor of a cookie identity that was just given (or
// shown again) its place in room a fresh place mark. User tokens need
// none (the shop vouches for them) and the embed has no cookie of its own.
func (ids identities) markPlace(c echo.Context, room, identity string) {
	if ids.embed || ids.vids == nil {
		return
	}
	v := visitorID(c)
	if v == "" {
		v, _ = c.Get(ctxNewVisitor).(string)
	}
	if v == "" || identity != queue.VisitorIdentity(v) {
		return
	}
	c.SetCookie(&http.Cookie{
		Name: placeCookiePrefix + room, Value: ids.vids.PlaceMark(room, v, ids.now()), Path: "/", MaxAge: visitorCookieAge,
		HttpOnly: true, Secure: ids.secure, SameSite: http.SameSiteLaxMode,
	})
}

// heldPlace reports whether the request's place mark says visitor v held
// a place in room within the cookie's lifetime.
func (ids identities) heldPlace(c echo.Context, room, v string) bool {
	ck, err := c.Cookie(placeCookiePrefix + room)
	return err == nil && ids.vids.CheckPlaceMark(room, v, ck.Value, ids.now(), visitorCookieAge*time.Second)
}

// forRead returns the identity of a request that reads or changes a ticket,
// or "" when it has none (so every ticket is foreign to it).
func (ids identities) forRead(c echo.Context, s queue.Settings) (string, error) {
	if ids.embed {
		return ids.embedForRead(c, s)
	}
	if t := bearer(c); t != "" {
		return ids.fromUserToken(s, t)
	}
	if v := visitorID(c); v != "" {
		return queue.VisitorIdentity(v), nil
	}
	return "", nil
}

func visitorID(c echo.Context) string {
	ck, err := c.Cookie(visitorCookie)
	if err != nil || !hexid.Valid(ck.Value) {
		return ""
	}
	return ck.Value
}

func bearer(c echo.Context) string {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}
