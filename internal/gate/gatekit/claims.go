package gatekit

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are an entry token's claims as a gate reads them. nbf keeps its
// milliseconds: it is the jittered start of the visitor's turn, and jwt's
// default precision would round it down by up to a second and bunch a
// batch together again. GetNotBefore hides nbf from jwt's validator so the
// gate checks it itself, at full precision, without touching the
// package-wide jwt.TimePrecision.
type Claims struct {
	Issuer    string           `json:"iss,omitempty"`
	Audience  jwt.ClaimStrings `json:"aud,omitempty"`
	Subject   string           `json:"sub,omitempty"`
	ID        string           `json:"jti,omitempty"`
	IssuedAt  *jwt.NumericDate `json:"iat,omitempty"`
	ExpiresAt *jwt.NumericDate `json:"exp,omitempty"`
	NBF       *float64         `json:"nbf,omitempty"`
	// Intent names the degraded-mode intent the holder also left in the
	// room: that is their order already (a checkout refuses a second).
	Intent string `json:"intent,omitempty"`
}

var _ jwt.Claims = (*Claims)(nil)

func (c *Claims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }
func (c *Claims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt, nil }
func (c *Claims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c *Claims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c *Claims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c *Claims) GetAudience() (jwt.ClaimStrings, error)       { return c.Audience, nil }

// NotBefore is nbf to the millisecond; zero when absent.
func (c *Claims) NotBefore() time.Time {
	if c.NBF == nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(math.Round(*c.NBF * 1000))).UTC()
}

// Peek reads a token's claims without checking anything. Only for tokens
// whose signature was already checked (to tell how long a not-yet-valid
// token must wait), never to decide whether one passes.
func Peek(tok string) (Claims, error) {
	var c Claims
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return c, errors.New("not a JWS")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

// bearer is the Authorization: Bearer credential, or "".
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}
