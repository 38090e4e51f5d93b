package server

import (
	"crypto/subtle"
	"net/http"

	"github.com/labstack/echo/v4"
)

var errUnauthorized = errorf(http.StatusUnauthorized, "unauthorized", "missing or wrong admin token")

// requireAdmin lets through requests bearing the admin token.
func requireAdmin(adminToken string) echo.MiddlewareFunc {
	want := []byte(adminToken)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			got := []byte(bearer(c))
			if len(want) == 0 || subtle.ConstantTimeCompare(got, want) != 1 {
				return errUnauthorized
			}
			return next(c)
		}
	}
}
