package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/waitroom/waitroom/queue/token"
	"github.com/waitroom/waitroom/server/gate/internal/gatekit"
)

// backend is waitroom over HTTP, plus the offline verifier and what this
// server learnt of its tokens' holders.
type backend struct {
	cfg  Config
	jwks *jwks
	held *held
}

func newBackend(cfg Config) *backend {
	h := newHeld(maxHeld)
	h.now = cfg.Now
	return &backend{cfg: cfg, jwks: &jwks{cfg: cfg}, held: h}
}

func (b *backend) roomURL(suffix string) string {
	return b.cfg.WaitroomURL + "/api/rooms/" + url.PathEscape(b.cfg.Room) + suffix
}

// ticketWire is waitroom's ticket JSON (docs/api.md).
type ticketWire struct {
	Ticket       string  `json:"ticket"`
	State        string  `json:"state"`
	Position     int64   `json:"position"`
	Waiting      int64   `json:"waiting"`
	ETAS         int64   `json:"eta_s"`
	NextUpdateMS int64   `json:"next_update_ms"`
	Token        *string `json:"token"`
	OrderableAt  *string `json:"orderable_at"`
	AcceptURL    *string `json:"accept_url"`
}

// Enter enters the line for an API client under the middleware's own
// visitor id, sent as waitroom's visitor cookie.
func (b *backend) Enter(ctx context.Context, visitor string) (gatekit.Ticket, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.roomURL("/enter"), nil)
	if err != nil {
		return gatekit.Ticket{}, fmt.Errorf("gate: enter: %w", err)
	}
	req.AddCookie(&http.Cookie{Name: gatekit.VisitorCookie, Value: visitor})
	var w ticketWire
	if err := b.do(req, &w); err != nil {
		return gatekit.Ticket{}, fmt.Errorf("gate: enter: %w", err)
	}
	t := gatekit.Ticket{ID: w.Ticket, State: w.State, Position: w.Position, Waiting: w.Waiting,
		ETA: time.Duration(w.ETAS) * time.Second, NextUpdate: time.Duration(w.NextUpdateMS) * time.Millisecond}
	if w.Token != nil {
		t.Token = *w.Token
	}
	if w.OrderableAt != nil {
		if t.OrderableAt, err = time.Parse(time.RFC3339Nano, *w.OrderableAt); err != nil {
			return gatekit.Ticket{}, fmt.Errorf("gate: enter: orderable_at: %w", err)
		}
	}
	if w.AcceptURL != nil {
		t.AcceptURL = *w.AcceptURL
		if strings.HasPrefix(t.AcceptURL, "/") {
			t.AcceptURL = b.cfg.PublicURL + t.AcceptURL
		}
	}
	return t, nil
}

// Verify checks offline, then that visitor holds the token (see held.go).
// A token passes offline when its sub is this visitor's (the middleware
// entered the line for it) or waitroom already bound it to this visitor on
// this server; otherwise waitroom binds it to its first holder. With Online,
// every token is also checked with waitroom, which knows whether its slot
// is still held.
func (b *backend) Verify(ctx context.Context, tok, visitor string) (gatekit.Verdict, error) {
	v, err := b.jwks.verify(tok)
	if err != nil || !v.Valid {
		return v, err
	}
	if b.held.completed(v.Ticket) {
		return gatekit.Verdict{Reason: "completed", Ticket: v.Ticket}, nil
	}
	if visitor == "" {
		return gatekit.Verdict{Reason: gatekit.ReasonOtherHolder, Ticket: v.Ticket}, nil
	}
	holder := holderOf(visitor)
	if !b.cfg.Online && (v.Subject == token.VisitorSubject(visitor) || b.held.heldBy(v.Ticket) == holder) {
		return v, nil
	}
	body, _ := json.Marshal(map[string]string{"token": tok, "room": b.cfg.Room, "holder": holder})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.WaitroomURL+"/api/tokens/verify", bytes.NewReader(body))
	if err != nil {
		return gatekit.Verdict{}, fmt.Errorf("gate: verify: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	var out struct {
		Valid  bool   `json:"valid"`
		Reason string `json:"reason"`
	}
	if err := b.do(req, &out); err != nil {
		return gatekit.Verdict{}, fmt.Errorf("gate: verify: %w", err)
	}
	if !out.Valid {
		return gatekit.Verdict{Reason: out.Reason, Ticket: v.Ticket, Subject: v.Subject, NotBefore: v.NotBefore}, nil
	}
	b.held.bind(v.Ticket, holder, v.ExpiresAt)
	return v, nil
}

// holderOf is the holder waitroom binds a token to for a visitor of this
// middleware: an identity in waitroom's own form, so a ticket the
// middleware entered under this visitor is its own, and the shop's cookie
// never leaves the shop.
func holderOf(visitor string) string { return "v:" + token.VisitorSubject(visitor) }

// Complete hands the slot back, and marks the token completed here, so this
// server refuses it from now on even offline.
func (b *backend) Complete(ctx context.Context, tok string) error {
	if v, err := b.jwks.verify(tok); err == nil && v.Ticket != "" {
		b.held.complete(v.Ticket, v.ExpiresAt)
	}
	body, _ := json.Marshal(map[string]string{"token": tok})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.roomURL("/complete"), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("gate: complete: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if err := b.do(req, nil); err != nil {
		return fmt.Errorf("gate: complete: %w", err)
	}
	return nil
}

// do sends req and decodes a 200 answer into out; other statuses are
// errors that quote waitroom's error code.
func (b *backend) do(req *http.Request, out any) error {
	req.Header.Set("Accept", "application/json")
	res, err := b.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		return fmt.Errorf("waitroom answered %d %s", res.StatusCode, e.Error.Code)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}
