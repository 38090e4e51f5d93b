package server

import (
	"io"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

// decodeBody reads a JSON object body into v; an empty body leaves v as is
// when optional is true. The body size is already bounded by middleware.
func decodeBody(c echo.Context, v any, optional bool) error {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	if len(data) == 0 && optional {
		return nil
	}
	return queue.DecodeStrict(data, v)
}
