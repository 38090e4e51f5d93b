package server

import (
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// embedRooms is what the embed page needs of the line: the room's settings,
// from the cache while Redis is down so the embed can still say "go ahead".
type embedRooms interface {
	roomReader
	cachedRooms
	Now() time.Time
}

// handleEmbedPage: GET /embed/rooms/:room?parent=<origin>[&sdk=1][&lang=].
// The page may be framed by parent only, and only when parent is one of the
// room's allowed_embedders: the browser enforces frame-ancestors, so a page
// that claims an allowed parent it is not cannot frame it either. Anything
// else gets an error page under the default frame-ancestors 'self', which the
// foreign page's browser refuses to show. The page does not enter: its script
// does, once the parent has passed the visitor's user token or key.
func handleEmbedPage(line embedRooms, deg degradeFlag) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		s, err := embedRoom(c, line, deg, room)
		if err != nil {
			return err
		}
		lang := pageLang(c)
		parent := c.QueryParam("parent")
		if parent == "" || !slices.Contains(s.AllowedEmbedders, parent) {
			return &apiError{Status: http.StatusForbidden, Code: "embed_forbidden", Field: "parent",
				Message: templates.T(lang, "embed.forbidden")}
		}
		c.Response().Header().Set("Content-Security-Policy", "frame-ancestors "+parent)
		return render.Page(c, http.StatusOK, templates.EmbedPage(templates.EmbedProps{
			Lang: lang, Room: room, Title: s.Title.In(string(lang)), Message: s.Message.In(string(lang)),
			Theme:  templates.Theme{Color: s.ThemeColor, LogoURL: s.LogoURL},
			Parent: parent, SDK: c.QueryParam("sdk") == "1", Now: line.Now(),
		}))
	}
}

// embedRoom reads the settings; while degraded, only the cache, which must
// not probe a Redis that is down.
func embedRoom(c echo.Context, line embedRooms, deg degradeFlag, room string) (queue.Settings, error) {
	if deg.Degraded() {
		s, ok := line.CachedSettings(room)
		if !ok {
			return queue.Settings{}, errRoomNotFound
		}
		return s, nil
	}
	return line.Settings(c.Request().Context(), room)
}
