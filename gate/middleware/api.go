package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
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

// Enter enters the line for an API client under the middleware's own
// visitor id, sent as waitroom's visitor cookie, with the client's solved
// challenge (pow) if it sent one. Waitroom's refusals for want of work and
// over a per-client limit go back to the client as waitroom gave them.
func (b *backend) Enter(ctx context.Context, visitor, pow string) (queue.View, error) {
	var body io.Reader
	if pow != "" {
		data, _ := json.Marshal(map[string]string{"pow": pow})
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.roomURL("/enter"), body)
	if err != nil {
		return queue.View{}, fmt.Errorf("gate: enter: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.AddCookie(&http.Cookie{Name: gatekit.VisitorCookie, Value: visitor})
	var t queue.View
	if err := b.do(req, &t); err != nil {
		var we *waitroomError
		if errors.As(err, &we) {
			if refusal := we.forClient(); refusal != nil {
				return queue.View{}, refusal
			}
		}
		return queue.View{}, fmt.Errorf("gate: enter: %w", err)
	}
	if _, err := t.OrderableTime(); err != nil {
		return queue.View{}, fmt.Errorf("gate: enter: orderable_at: %w", err)
	}
	if t.AcceptURL != nil && strings.HasPrefix(*t.AcceptURL, "/") {
		abs := b.cfg.PublicURL + *t.AcceptURL
		t.AcceptURL = &abs
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
		return gatekit.Verdict{Reason: vocab.ReasonCompleted, Ticket: v.Ticket}, nil
	}
	if visitor == "" {
		return gatekit.Verdict{Reason: gatekit.ReasonOtherHolder, Ticket: v.Ticket}, nil
	}
	holder := holderOf(visitor)
	if !b.cfg.Online && b.held.heldBy(v.Ticket) == holder {
		return v, nil
	}
	if !b.cfg.Online && v.Subject == token.VisitorSubject(visitor) {
		return b.arrive(ctx, tok, holder, v) // its first acceptance here
	}
	body, _ := json.Marshal(map[string]string{"token": tok, "room": b.cfg.Room, "holder": holder})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.WaitroomURL+"/api/tokens/verify", bytes.NewReader(body))
	if err != nil {
		return gatekit.Verdict{}, fmt.Errorf("gate: verify: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.cfg.Credential)
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

// Redeem takes a hand-off code for its token, server to server, bound to
// visitor from now on in place of whoever held it. "" when waitroom refuses
// the code (spent, expired, the turn over).
func (b *backend) Redeem(ctx context.Context, code, visitor string) (string, error) {
	holder := holderOf(visitor)
	tok, err := redeem(ctx, b.cfg, code, holder)
	if err != nil || tok == "" {
		return "", err
	}
	if v, err := b.jwks.verify(tok); err == nil && v.Ticket != "" {
		b.held.bind(v.Ticket, holder, v.ExpiresAt)
	}
	return tok, nil
}

// redeem asks waitroom for a hand-off code's token; "" when it refuses the code.
func redeem(ctx context.Context, cfg Config, code, holder string) (string, error) {
	body, _ := json.Marshal(map[string]string{"code": code, "room": cfg.Room, "holder": holder})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.WaitroomURL+"/api/tokens/redeem", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("gate: redeem: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if holder != "" || cfg.Credential != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Credential)
	}
	var out struct {
		Token string `json:"token"`
	}
	if err := (&backend{cfg: cfg}).do(req, &out); err != nil {
		var we *waitroomError
		if errors.As(err, &we) && (we.status == http.StatusBadRequest || we.status == http.StatusConflict) {
			return "", nil
		}
		return "", fmt.Errorf("gate: redeem: %w", err)
	}
	return out.Token, nil
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
		e := &waitroomError{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After")}
		_ = json.Unmarshal(data, &e.body)
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// waitroomError is an answer of waitroom's other than 200.
type waitroomError struct {
	status     int
	retryAfter string
	body       struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"error"`
		Challenge json.RawMessage `json:"challenge"`
	}
}

func (e *waitroomError) Error() string {
	return fmt.Sprintf("waitroom answered %d %s", e.status, e.body.Error.Code)
}

// forClient is the refusal the client itself is to get: a place that needs
// work (the challenge is bound to the client's visitor id, which it keeps
// in the middleware's cookie) or a per-client limit; nil for the others.
func (e *waitroomError) forClient() error {
	b := e.body.Error
	switch {
	case (e.status == http.StatusForbidden || e.status == http.StatusBadRequest) && len(e.body.Challenge) > 0 &&
		json.Valid(e.body.Challenge) && bytes.HasPrefix(e.body.Challenge, []byte("{")):
		return &gatekit.Challenged{Status: e.status, Code: b.Code, Message: b.Message, Field: b.Field, Challenge: e.body.Challenge}
	case e.status == http.StatusTooManyRequests && b.Code != "":
		secs, _ := strconv.Atoi(e.retryAfter)
		return &gatekit.Limited{Code: b.Code, Message: b.Message, RetryAfter: time.Duration(min(max(secs, 1), 3600)) * time.Second}
	}
	return nil
}
