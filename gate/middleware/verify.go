package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
)

// jwks verifies entry tokens offline with waitroom's published keys.
type jwks struct {
	cfg Config

	mu   sync.Mutex
	keys keyfunc.Keyfunc
}

// keyfunc starts the JWKS cache on first use, not in New: the shop may
// start before waitroom listens. It refreshes in the background until
// cfg.Context ends, and at once on an unknown kid (a rotated key).
func (j *jwks) keyfunc() (keyfunc.Keyfunc, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.keys != nil {
		return j.keys, nil
	}
	log := j.cfg.Logger
	k, err := keyfunc.NewDefaultOverrideCtx(j.cfg.Context, []string{j.cfg.WaitroomURL + "/.well-known/jwks.json"}, keyfunc.Override{
		Client: j.cfg.Client, HTTPTimeout: 5 * time.Second,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) { log.Warn("gate: refresh jwks", "url", u, "err", err) }
		},
	})
	if err != nil {
		return nil, fmt.Errorf("gate: jwks: %w", err)
	}
	j.keys = k
	return k, nil
}

// verify checks signature (EdDSA only), issuer, room (aud) and exp through
// jwt, then nbf to the millisecond itself.
func (j *jwks) verify(tok string) (gatekit.Verdict, error) {
	keys, err := j.keyfunc()
	if err != nil {
		return gatekit.Verdict{}, err
	}
	var c gatekit.Claims
	_, err = jwt.ParseWithClaims(tok, &c, keys.Keyfunc,
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithIssuer(j.cfg.Issuer), jwt.WithAudience(j.cfg.Room),
		jwt.WithExpirationRequired(), jwt.WithLeeway(0), jwt.WithTimeFunc(j.cfg.Now))
	if err != nil {
		return gatekit.Verdict{Reason: reason(err)}, nil
	}
	if c.ID == "" || c.Subject == "" {
		return gatekit.Verdict{Reason: "malformed"}, nil
	}
	v := gatekit.Verdict{Ticket: c.ID, Subject: c.Subject, NotBefore: c.NotBefore(), Intent: c.Intent}
	if c.ExpiresAt != nil {
		v.ExpiresAt = c.ExpiresAt.Time
	}
	if j.cfg.Now().Before(v.NotBefore) {
		v.Reason = gatekit.ReasonNotYetValid
		return v, nil
	}
	v.Valid = true
	return v, nil
}

// reason names a jwt refusal the way waitroom's verify API does.
func reason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "malformed"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "expired"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "wrong_room"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "malformed"
	}
	// Bad signature, unknown kid, wrong alg or issuer.
	return "forged"
}
