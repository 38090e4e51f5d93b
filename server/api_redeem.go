package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

// redeemer is what the redeem handler needs of the line.
type redeemer interface {
	Redeem(ctx context.Context, room, code, holder string) (string, queue.Verdict, error)
}

// handleRedeem: POST /api/tokens/redeem {"code", "room", "holder"?} takes a
// hand-off code (redirect_url's wr_code) once, server to server, for the
// entry token. With a holder (the shop's authenticated call), the token is
// bound to that holder from now on, in place of whoever held it.
func handleRedeem(line redeemer, auth shopAuth) echo.HandlerFunc {
	return func(c echo.Context) error {
		var b struct {
			Code   string `json:"code"`
			Room   string `json:"room"`
			Holder string `json:"holder"`
		}
		if err := decodeBody(c, &b, false); err != nil {
			return err
		}
		switch {
		case b.Code == "":
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "code", Message: "code: is required"}
		case !queue.ValidRoomID(b.Room):
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "room", Message: "room: want the code's room ([a-z0-9-]{1,64})"}
		case !validHolder(b.Holder):
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "holder", Message: "holder: at most 128 characters of A-Z a-z 0-9 : . _ -"}
		}
		if b.Holder != "" {
			if err := auth.check(c, b.Room); err != nil {
				return err
			}
		}
		tok, v, err := line.Redeem(c.Request().Context(), b.Room, b.Code, b.Holder)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		switch {
		case v.Reason == queue.ReasonCodeInvalid:
			return &apiError{Status: http.StatusBadRequest, Code: queue.ReasonCodeInvalid, Field: "code", Message: "code: not a hand-off code of this room, or expired"}
		case v.Reason == queue.ReasonCodeSpent:
			return &apiError{Status: http.StatusConflict, Code: queue.ReasonCodeSpent, Field: "code", Message: "code: already redeemed; the waiting page hands its visitor a fresh one"}
		case !v.Valid:
			return &apiError{Status: http.StatusConflict, Code: "token_" + v.Reason, Field: "code", Message: "the ticket's turn is over: " + v.Reason}
		}
		exp := v.Claims.ExpiresAt.UTC().Format(time.RFC3339)
		return c.JSON(http.StatusOK, map[string]any{"token": tok, "room": v.Claims.Room, "ticket": v.Claims.TicketID,
			"sub": v.Claims.Subject, "expires_at": exp})
	}
}
