package server

import (
	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server/push"
)

// mountEmbed adds the embed: its page, the ticket API again under
// /api/rooms/:room/embed/ with the embed's identities (user token, embed key,
// partitioned cookie), and the SDK at its stable URL.
func mountEmbed(e *echo.Echo, api *echo.Group, line *queue.Line, ids identities, deg degradeFlag, hub *push.Hub, gate powGate) {
	eids := ids.embedded()
	e.GET("/embed/rooms/:room", handleEmbedPage(line, deg))
	api.POST("/rooms/:room/embed/enter", handleEnter(line, eids, deg, gate))
	api.GET("/rooms/:room/embed/challenge", handleChallenge(line, eids, gate))
	api.GET("/rooms/:room/embed/tickets/:ticket", handleStatus(line, eids, deg))
	api.DELETE("/rooms/:room/embed/tickets/:ticket", handleLeave(line, eids, deg))
	api.GET("/rooms/:room/embed/tickets/:ticket/ws", handlePush(line, eids, deg, hub, false))
	api.GET("/rooms/:room/embed/tickets/:ticket/events", handlePush(line, eids, deg, hub, true))
	e.GET(embedSDKPath, handleEmbedSDK())
}
