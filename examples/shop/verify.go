package shop

import (
	"context"
	"fmt"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

func (s *Shop) keyfunc() (keyfunc.Keyfunc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys != nil {
		return s.keys, nil
	}
	log := s.cfg.Logger
	k, err := keyfunc.NewDefaultOverrideCtx(s.ctx, []string{s.cfg.WaitroomURL + "/.well-known/jwks.json"}, keyfunc.Override{
		Client: s.cfg.Client, HTTPTimeout: 5 * time.Second, RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) { log.Warn("shop: refresh jwks", "url", u, "err", err) }
		},
	})
	if err != nil {
		return nil, fmt.Errorf("shop: jwks: %w", err)
	}
	s.keys = k
	return k, nil
}

// verify checks the entry token offline: signature through the JWKS, the room
// as audience, and the times, so the jitter holds.
func (s *Shop) verify(tok string) (*jwt.RegisteredClaims, error) {
	keys, err := s.keyfunc()
	if err != nil {
		return nil, err
	}
	claims := &jwt.RegisteredClaims{}
	_, err = jwt.ParseWithClaims(tok, claims, keys.Keyfunc,
		jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithAudience(s.cfg.Room),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(s.cfg.Now))
	return claims, err
}
