package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/static"
)

// embedSDKPath is the SDK's URL for shops to copy: it stays the same across
// builds, unlike the hashed /static/ URLs the pages use.
const embedSDKPath = static.Prefix + "waitroom-embed.js"

// handleEmbedSDK serves the SDK at its stable URL with a short cache, so a
// new build reaches shops within minutes; the ETag makes the check cheap.
func handleEmbedSDK() echo.HandlerFunc {
	files := static.Handler()
	hashed := static.Path("waitroom-embed.js")
	return func(c echo.Context) error {
		r := c.Request().Clone(c.Request().Context())
		r.URL.Path, r.URL.RawPath = hashed, ""
		h := c.Response().Header()
		h.Set("Access-Control-Allow-Origin", "*") // a public script: integrity checks need CORS
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
		files.ServeHTTP(shortCache{c.Response()}, r)
		return nil
	}
}

// shortCache replaces the static handler's year-long immutable cache.
type shortCache struct{ http.ResponseWriter }

func (w shortCache) WriteHeader(status int) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.ResponseWriter.WriteHeader(status)
}

func (w shortCache) Write(b []byte) (int, error) {
	if w.Header().Get("Cache-Control") != "public, max-age=300" {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}
