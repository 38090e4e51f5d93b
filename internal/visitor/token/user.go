package token

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MaxUserSubject bounds the sub of a user token, which becomes part of the
// waiter's identity and of store keys.
const MaxUserSubject = 256

// ParseUserToken checks a shop's user token at now and returns its sub. Shops
// with logins sign it with HS256 and the room's secret; no other alg is
// accepted. exp and nbf are honoured when present, with no leeway. Errors wrap
// ErrMalformed, ErrForged, ErrExpired or ErrNotYetValid.
func ParseUserToken(tok, secret string, now time.Time) (string, error) {
	if secret == "" {
		// An empty HMAC key is a key anyone can use.
		return "", errors.New("token: user: room has no user secret")
	}
	if err := checkAlphabet("user", tok); err != nil {
		return "", err
	}
	var c jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(tok, &c,
		func(*jwt.Token) (any, error) { return []byte(secret), nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithLeeway(0),
		jwt.WithStrictDecoding(),
	)
	if err != nil {
		return "", classify("user", err)
	}
	switch {
	case c.Subject == "":
		return "", fmt.Errorf("token: user: %w: sub is required", ErrMalformed)
	case len(c.Subject) > MaxUserSubject:
		return "", fmt.Errorf("token: user: %w: sub is longer than %d bytes", ErrMalformed, MaxUserSubject)
	}
	return c.Subject, nil
}
