package token

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// EntryClaims are what an entry token says: the holder (Subject) of ticket
// TicketID was admitted to Room and may check out between NotBefore and
// ExpiresAt.
type EntryClaims struct {
	Issuer    string    // iss
	Room      string    // aud, a single string
	Subject   string    // sub
	TicketID  string    // jti
	IssuedAt  time.Time // iat
	NotBefore time.Time // nbf
	ExpiresAt time.Time // exp
	// Intent names the degraded-mode intent the holder also left in Room
	// ("intent", absent without one): checkout refuses a second order.
	Intent string
}

// entryWire is the JSON payload. It spells aud as one string, which
// jwt.RegisteredClaims would only do by changing a package-wide setting.
type entryWire struct {
	Issuer    string           `json:"iss,omitempty"`
	Audience  string           `json:"aud"`
	Subject   string           `json:"sub"`
	ID        string           `json:"jti"`
	IssuedAt  *jwt.NumericDate `json:"iat,omitempty"`
	NotBefore *preciseDate     `json:"nbf,omitempty"`
	ExpiresAt *jwt.NumericDate `json:"exp"`
	Intent    string           `json:"intent,omitempty"`
}

func (w *entryWire) GetExpirationTime() (*jwt.NumericDate, error) { return w.ExpiresAt, nil }
func (w *entryWire) GetIssuedAt() (*jwt.NumericDate, error)       { return w.IssuedAt, nil }
func (w *entryWire) GetNotBefore() (*jwt.NumericDate, error) {
	if w.NotBefore == nil {
		return nil, nil
	}
	return &w.NotBefore.NumericDate, nil
}
func (w *entryWire) GetIssuer() (string, error)  { return w.Issuer, nil }
func (w *entryWire) GetSubject() (string, error) { return w.Subject, nil }
func (w *entryWire) GetAudience() (jwt.ClaimStrings, error) {
	return jwt.ClaimStrings{w.Audience}, nil
}

// Sign makes an entry token signed by the first key, with its kid in the
// header. Ed25519 signatures are deterministic, so the same claims always give
// the same token: the server can sign again on each read instead of storing it.
//
// exp and iat go out in whole seconds, exp rounded down; nbf in milliseconds,
// rounded up: rounding never lets a token be used outside its window.
// An empty Issuer takes the keyset's.
func (ks *Keyset) Sign(c EntryClaims) (string, error) {
	if len(ks.keys) == 0 {
		return "", errors.New("token: sign: keyset has no keys")
	}
	if c.Issuer == "" {
		c.Issuer = ks.Issuer
	}
	switch {
	case ks.Issuer != "" && c.Issuer != ks.Issuer:
		// Verify would refuse it, so fail here where the mistake is.
		return "", fmt.Errorf("token: sign: issuer %q is not the keyset's %q", c.Issuer, ks.Issuer)
	case c.Room == "":
		return "", errors.New("token: sign: room is empty")
	case c.Subject == "":
		return "", errors.New("token: sign: subject is empty")
	case c.TicketID == "":
		return "", errors.New("token: sign: ticket id is empty")
	case c.ExpiresAt.IsZero():
		return "", errors.New("token: sign: entry tokens must expire")
	}
	w := entryWire{
		Issuer:    c.Issuer,
		Audience:  c.Room,
		Subject:   c.Subject,
		ID:        c.TicketID,
		IssuedAt:  numericDate(c.IssuedAt, false),
		NotBefore: millisDate(c.NotBefore),
		ExpiresAt: numericDate(c.ExpiresAt, false),
		Intent:    c.Intent,
	}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, &w)
	t.Header["kid"] = ks.keys[0].kid
	s, err := t.SignedString(ks.keys[0].priv)
	if err != nil {
		return "", fmt.Errorf("token: sign: %w", err)
	}
	return s, nil
}

// numericDate rounds t to a whole second, up when roundUp, or gives nil for
// the zero time (claim left out).
func numericDate(t time.Time, roundUp bool) *jwt.NumericDate {
	if t.IsZero() {
		return nil
	}
	sec := t.Unix() // floors, also before 1970
	if roundUp && t.Nanosecond() != 0 {
		sec++
	}
	return &jwt.NumericDate{Time: time.Unix(sec, 0).UTC()}
}

// preciseDate is a NumericDate written with millisecond precision (RFC 7519
// allows fractions). nbf is the jittered start of a visitor's turn: whole
// seconds would move it by up to a second and bunch a batch together again.
type preciseDate struct{ jwt.NumericDate }

func (d preciseDate) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(d.UnixMilli())/1000, 'f', 3, 64)), nil
}

// UnmarshalJSON keeps the milliseconds that jwt.NumericDate would drop at
// its default precision.
func (d *preciseDate) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("token: nbf: %w", err)
	}
	d.Time = time.UnixMilli(int64(math.Round(f * 1000))).UTC()
	return nil
}

// millisDate rounds t up to the millisecond, so nbf is never before t.
func millisDate(t time.Time) *preciseDate {
	if t.IsZero() {
		return nil
	}
	ms := t.UnixMilli()
	if t.Sub(time.UnixMilli(ms)) > 0 {
		ms++
	}
	return &preciseDate{jwt.NumericDate{Time: time.UnixMilli(ms).UTC()}}
}

func (w *entryWire) GetNotBeforeDate() *jwt.NumericDate {
	d, _ := w.GetNotBefore()
	return d
}

func timeOf(d *jwt.NumericDate) time.Time {
	if d == nil {
		return time.Time{}
	}
	return d.Time.UTC()
}

// Verify checks an entry token at now and returns its claims. Only EdDSA
// under a kid of the keyset is accepted, with no leeway on exp and nbf, and
// the issuer must match when the keyset has one. Errors wrap ErrMalformed,
// ErrForged, ErrExpired or ErrNotYetValid.
//
// The room is not checked here: the caller compares Room with the room it serves.
func (ks *Keyset) Verify(tok string, now time.Time) (EntryClaims, error) {
	if err := checkAlphabet("verify", tok); err != nil {
		return EntryClaims{}, err
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithLeeway(0),
		jwt.WithExpirationRequired(),
		jwt.WithStrictDecoding(), // one signature, one spelling
	}
	if ks.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(ks.Issuer))
	}
	var w entryWire
	_, err := jwt.ParseWithClaims(tok, &w, ks.keyfunc, opts...)
	if err != nil {
		return EntryClaims{}, classify("verify", err)
	}
	if w.Audience == "" || w.Subject == "" || w.ID == "" {
		return EntryClaims{}, fmt.Errorf("token: verify: %w: aud, sub and jti are required", ErrMalformed)
	}
	return EntryClaims{
		Issuer:    w.Issuer,
		Room:      w.Audience,
		Subject:   w.Subject,
		TicketID:  w.ID,
		IssuedAt:  timeOf(w.IssuedAt),
		NotBefore: timeOf(w.GetNotBeforeDate()),
		ExpiresAt: timeOf(w.ExpiresAt),
		Intent:    w.Intent,
	}, nil
}

var errUnknownKID = errors.New("unknown kid")

func (ks *Keyset) keyfunc(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	pub, ok := ks.lookup(kid)
	if !ok {
		return nil, fmt.Errorf("%w %q", errUnknownKID, kid)
	}
	return pub, nil
}
