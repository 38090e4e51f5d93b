package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
)

// arrive tells waitroom, once per token, that its own visitor reached
// checkout here: a token this middleware's visitor entered for passes
// offline, but waitroom counts an admitted slot unused (and gives it to the
// next in line after the room's arrival_window_s) until someone verifies
// it. The verify carries no holder, so it binds nothing, but it carries
// the shop's Credential: only the shop's verify counts as an arrival. Afterwards the
// token passes offline as before (held). When waitroom cannot be asked the
// token passes offline, and the next request asks again.
func (b *backend) arrive(ctx context.Context, tok, holder string, v gatekit.Verdict) (gatekit.Verdict, error) {
	body, _ := json.Marshal(map[string]string{"token": tok, "room": b.cfg.Room})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.WaitroomURL+"/api/tokens/verify", bytes.NewReader(body))
	if err != nil {
		return v, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.cfg.Credential)
	var out struct {
		Valid  bool   `json:"valid"`
		Reason string `json:"reason"`
	}
	if err := b.do(req, &out); err != nil {
		b.cfg.Logger.Warn("gate: arrival not reported; the token passes offline", "ticket", v.Ticket, "err", err)
		return v, nil
	}
	if !out.Valid {
		return gatekit.Verdict{Reason: out.Reason, Ticket: v.Ticket, Subject: v.Subject, NotBefore: v.NotBefore}, nil
	}
	b.held.bind(v.Ticket, holder, v.ExpiresAt)
	return v, nil
}
