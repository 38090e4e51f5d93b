package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// verifier is what the token handlers need of the line.
type verifier interface {
	Verify(ctx context.Context, tok, room string) (queue.Verdict, error)
	Check(ctx context.Context, tok, room string) (queue.Verdict, error)
	Complete(ctx context.Context, tok, room string) (queue.Verdict, error)
	Hold(ctx context.Context, tok, room, holder string, mode queue.HoldMode) (queue.Verdict, error)
}

type tokenBody struct {
	Token string `json:"token"`
	Room  string `json:"room"`
	// Holder, on verify, binds the token to the first holder that presents
	// it (a shop's own visitor id, hashed): see token_holder.go.
	Holder string `json:"holder"`
}

func readToken(c echo.Context) (tokenBody, error) {
	var b tokenBody
	if err := decodeBody(c, &b, false); err != nil {
		return b, err
	}
	if b.Token == "" {
		return b, &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "token", Message: "token: is required"}
	}
	return b, nil
}

// handleVerify: POST /api/tokens/verify {"token", "room"?, "holder"?} answers
// whether the token's holder may check out now, and if not, why. With a
// holder, the token is bound to the first holder that presents it, and any
// other gets reason other_holder; only the shop may ask that (shopAuth).
// Only the shop's verify (its key or the admin token) is the visitor
// arriving at checkout; an anonymous one checks and marks nothing, so a
// script holding a squatted slot's token cannot keep it from lapsing
// without coming to the shop.
func handleVerify(line verifier, auth shopAuth) echo.HandlerFunc {
	return func(c echo.Context) error {
		b, err := readToken(c)
		if err != nil {
			return err
		}
		if !validHolder(b.Holder) {
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "holder", Message: "holder: at most 128 characters of A-Z a-z 0-9 : . _ -"}
		}
		room := b.Room
		if room == "" {
			room = roomOf(b.Token)
		}
		var v queue.Verdict
		switch {
		case b.Holder != "":
			if err := auth.check(c, room); err != nil {
				return err
			}
			v, err = line.Hold(c.Request().Context(), b.Token, b.Room, b.Holder, queue.HoldFirst)
		case bearer(c) != "":
			// A credential sent is checked: a shop with a wrong key would
			// otherwise see its visitors' slots lapse as no-shows.
			if !auth.valid(bearer(c), room) {
				return errCredentialForbidden
			}
			v, err = line.Verify(c.Request().Context(), b.Token, b.Room)
		default:
			v, err = line.Check(c.Request().Context(), b.Token, b.Room)
		}
		if err != nil {
			return err
		}
		out := struct {
			Valid     bool    `json:"valid"`
			Room      string  `json:"room,omitempty"`
			Sub       string  `json:"sub,omitempty"`
			ExpiresAt *string `json:"expires_at"`
			Reason    string  `json:"reason,omitempty"`
		}{Valid: v.Valid, Reason: v.Reason}
		if v.Valid {
			exp := v.Claims.ExpiresAt.UTC().Format(time.RFC3339)
			out.Room, out.Sub, out.ExpiresAt = v.Claims.Room, v.Claims.Subject, &exp
		}
		return c.JSON(http.StatusOK, out)
	}
}

// handleComplete: POST /api/rooms/:room/complete {"token"}: checkout is done,
// the slot is freed at once and the token stops verifying.
func handleComplete(line verifier) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		b, err := readToken(c)
		if err != nil {
			return err
		}
		v, err := line.Complete(c.Request().Context(), b.Token, room)
		if err != nil {
			return err
		}
		if !v.Valid {
			status := http.StatusConflict
			switch v.Reason {
			case "malformed", "forged", "wrong_room":
				status = http.StatusBadRequest
			}
			return &apiError{Status: status, Code: "token_" + v.Reason, Field: "token", Message: "token is not active: " + v.Reason}
		}
		return c.JSON(http.StatusOK, map[string]any{"completed": true, "room": room, "ticket": v.Claims.TicketID})
	}
}

// handleJWKS: GET /.well-known/jwks.json, the public keys checkout verifies with.
func handleJWKS(keys *token.Keyset) echo.HandlerFunc {
	body := keys.JWKS()
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=300")
		return c.Blob(http.StatusOK, "application/json", body)
	}
}
