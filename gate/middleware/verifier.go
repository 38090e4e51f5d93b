package middleware

import (
	"context"
	"errors"
	"fmt"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
)

// Verdict is what verifying an entry token found. Reason, when not Valid:
// malformed, forged (bad signature, unknown key, wrong issuer), wrong_room,
// expired or not_yet_valid (NotBefore says when the turn starts).
type Verdict = gatekit.Verdict

// Verifier checks entry tokens offline through waitroom's JWKS, as the
// middleware does, for a checkout that answers refusals with pages of its
// own instead of sending visitors to the line.
type Verifier struct {
	j   *jwks
	cfg Config
}

// NewVerifier uses cfg's WaitroomURL, Issuer (or PublicURL), Room,
// Credential (optional here), Client, Logger, Now and Context; the rest is
// ignored.
func NewVerifier(cfg Config) (*Verifier, error) {
	if err := cfg.defaults(); err != nil && (cfg.Credential != "" || !errors.Is(err, errNoCredential)) {
		return nil, fmt.Errorf("gate: verifier: %w", err)
	}
	return &Verifier{j: &jwks{cfg: cfg}, cfg: cfg}, nil
}

// Redeem takes a hand-off code (the ?wr_code= the waiting page sent the
// visitor with) once, server to server, for its entry token; "" when
// waitroom refuses the code (spent, expired, the turn over). It binds the
// token to nobody: the checkout then holds the token as it would have held
// a ?wr_token=.
func (v *Verifier) Redeem(ctx context.Context, code string) (string, error) {
	return redeem(ctx, v.cfg, code, "")
}

// Verify checks tok. A refused token is a Verdict with a Reason; an error
// means the keys could not be fetched, so nothing was decided.
func (v *Verifier) Verify(tok string) (Verdict, error) { return v.j.verify(tok) }
