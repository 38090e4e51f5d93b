package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/docs"
)

// handleOpenAPI: GET /api/openapi.yaml, the API's description.
func handleOpenAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, "application/yaml", docs.OpenAPI)
}
