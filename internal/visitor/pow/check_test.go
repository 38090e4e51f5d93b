package pow_test

import (
	"context"
	"errors"
	"testing"

	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/queue"
)

// noLimits is a line that holds no network to anything: the check alone.
type noLimits struct{}

func (noLimits) LimitClientPaid(context.Context, string, *queue.Settings, string, string, int64) error {
	return nil
}
func (noLimits) PlacesHeld(context.Context, string, string) (int64, error) { return 0, nil }

// TestCheckComesBeforeTheEnter: the check gives the proof an enter spends
// and keeps a refused solution's answer for a newcomer, while one who holds
// a place gets it back; Entered words the enter's refusals.
func TestCheckComesBeforeTheEnter(t *testing.T) {
	now := t0
	g := pow.Gate{Issuer: issuer(&now)}
	ctx, c := context.Background(), pow.Client{Identity: "v:abc"}
	s := queue.DefaultSettings()
	s.BotProtection.ProofOfWork, s.BotProtection.PowCost = queue.ProofOfWorkOn, 30

	off := queue.DefaultSettings()
	off.BotProtection.ProofOfWork = queue.ProofOfWorkOff
	if ch, err := g.Check(ctx, noLimits{}, off, "sale", c, ""); err != nil || ch.Proof.Required || ch.Refused != nil {
		t.Errorf("protection off: %+v %v, want a free place", ch, err)
	}

	ch, err := g.Check(ctx, noLimits{}, s, "sale", c, solved(t, g.Issuer, "sale", "v:abc", 30).Encode())
	if err != nil || !ch.Proof.Required || ch.Proof.ID == "" || ch.Refused != nil {
		t.Fatalf("a solution: %+v %v, want its proof to spend", ch, err)
	}
	var r *pow.Refusal
	if err := g.Entered(ctx, noLimits{}, s, "sale", c, ch, queue.ErrProofSpent); !errors.As(err, &r) || r.Code != "challenge_spent" || r.Challenge.Signature == "" {
		t.Errorf("a spent solution: %v, want challenge_spent with a fresh challenge", err)
	}

	ch, err = g.Check(ctx, noLimits{}, s, "sale", c, "")
	if err != nil || !ch.Proof.Required || ch.Proof.ID != "" || ch.Refused != nil {
		t.Fatalf("no solution: %+v %v, want an enter that asks for one", ch, err)
	}
	if err := g.Entered(ctx, noLimits{}, s, "sale", c, ch, queue.ErrProofRequired); !errors.As(err, &r) || r.Code != pow.CodeRequired {
		t.Errorf("a newcomer without a solution: %v, want %s", err, pow.CodeRequired)
	}

	ch, err = g.Check(ctx, noLimits{}, s, "sale", c, "not a payload")
	if err != nil || ch.Refused == nil || !ch.Refused.Malformed || !ch.Proof.Required || ch.Proof.ID != "" {
		t.Fatalf("a malformed solution: %+v %v, want a refusal kept for after the enter", ch, err)
	}
	if err := g.Entered(ctx, noLimits{}, s, "sale", c, ch, nil); err != nil {
		t.Errorf("a holder with a bad solution: %v, want its place back", err)
	}
	if err := g.Entered(ctx, noLimits{}, s, "sale", c, ch, queue.ErrProofRequired); err != error(ch.Refused) {
		t.Errorf("a newcomer with a bad solution: %v, want the check's refusal", err)
	}
	down := errors.New("store down")
	if err := g.Entered(ctx, noLimits{}, s, "sale", c, ch, down); !errors.Is(err, down) {
		t.Errorf("the store failed: %v, want its error", err)
	}
}
