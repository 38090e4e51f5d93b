package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

// embedded returns identities for the embed's API: a user token first, then
// the embed key (header, query, partitioned cookie). It never reads the
// top-level visitor cookie, which a same-site embedder's frame would also
// send: the embed and the top-level page are told apart by route, not by luck.
func (ids identities) embedded() identities {
	ids.embed = true
	return ids
}

// embedForEnter is forEnter inside an iframe. It always answers with the key
// in the X-Waitroom-Key header, and sets the anonymous key as a partitioned
// cookie for the push channels; where the browser refuses it, the SDK's copy
// of the key keeps the place.
func (ids identities) embedForEnter(c echo.Context, s queue.Settings, userToken string) (string, error) {
	room, now := c.Param("room"), ids.now()
	if userToken == "" {
		userToken = bearer(c)
	}
	if userToken != "" {
		id, err := ids.fromUserToken(s, userToken)
		if err != nil {
			return "", err
		}
		c.Response().Header().Set(embedKeyHeader, newUserKey(room, strings.TrimPrefix(id, "u:"), s.UserSecret, now))
		return id, nil
	}
	key := c.Request().Header.Get(embedKeyHeader)
	if key == "" {
		key = embedCookie(c)
	}
	id := keyIdentity(key, room, s, now)
	if id == "" { // none, or stale: a new visitor rather than a stuck one
		key = newAnonymousKey()
		id = keyIdentity(key, room, s, now)
	}
	if anonymousKey(key) {
		c.SetCookie(&http.Cookie{
			Name: embedKeyCookie, Value: key, Path: embedCookiePath(room), MaxAge: int(embedKeyTTL.Seconds()),
			HttpOnly: true, Secure: true, SameSite: http.SameSiteNoneMode, Partitioned: true,
		})
	}
	c.Response().Header().Set(embedKeyHeader, key)
	return id, nil
}

// embedForRead is forRead inside an iframe. The key may come in the query
// only because WebSocket and EventSource cannot send headers.
func (ids identities) embedForRead(c echo.Context, s queue.Settings) (string, error) {
	if t := bearer(c); t != "" {
		return ids.fromUserToken(s, t)
	}
	key := c.Request().Header.Get(embedKeyHeader)
	if key == "" && c.Request().Method == http.MethodGet {
		key = c.QueryParam(embedKeyQuery)
	}
	if key == "" {
		key = embedCookie(c)
	}
	return keyIdentity(key, c.Param("room"), s, ids.now()), nil
}

func embedCookie(c echo.Context) string {
	if ck, err := c.Cookie(embedKeyCookie); err == nil {
		return ck.Value
	}
	return ""
}

// embedCookiePath scopes the key's cookie to one room's embed API.
func embedCookiePath(room string) string { return "/api/rooms/" + room + "/embed/" }
