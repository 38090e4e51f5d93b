package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/queue"
)

// powLocalSpent bounds the ids one server remembers while Redis is down:
// each costs a solved challenge, and they are forgotten when it expires.
const powLocalSpent = 100_000

// powGate makes a new place cost a solved challenge when the room asks for
// one (bot_protection.proof_of_work), at the price of the client's network:
// pow.Gate, shared with the gates, plus what only waitroom does. Challenges
// are stateless; single use is a mark in Redis (queue's enter script), or
// in this process while degraded.
type powGate struct {
	pow.Gate
	line pow.Line
	// limit counts challenges and solutions per client network; nil: none.
	limit challengeCounter
	// v4Bits is the IPv4 prefix a network is counted by (Config.NetworkIPv4Bits).
	v4Bits int
	local  *pow.SpentSet
	now    func() time.Time
	// figures counts challenges and intents into the sale's history; nil: none.
	figures figureCounter
}

// figureCounter adds to the sale's history (*history.Store's Add).
type figureCounter interface {
	Add(room string, at time.Time, f history.Figure, n int64)
}

// count adds one of f to room's current minute.
func (g powGate) count(room string, f history.Figure) {
	if g.figures != nil {
		g.figures.Add(room, g.now(), f, 1)
	}
}

// challengeCounter is throttle.Failures' Take: one use by a client bucket,
// refused with how long to wait when the bucket used up its allowance.
type challengeCounter interface {
	Take(ctx context.Context, client string) (time.Duration, bool)
}

// take counts one challenge or solution of c's network; a refusal is 429.
func (g powGate) take(c echo.Context) error {
	if g.limit == nil {
		return nil
	}
	if wait, ok := g.limit.Take(c.Request().Context(), g.network(c)); !ok {
		return &apiError{Status: http.StatusTooManyRequests, Code: queue.CodeRateLimited,
			Message: "too many proof-of-work challenges and solutions from this network; retry after a while", RetryAfter: max(wait, time.Second)}
	}
	return nil
}

// network is the client's network, as prices and the challenge limit count it.
func (g powGate) network(c echo.Context) string { return clientip.Network(c.RealIP(), g.v4Bits) }

func newPowGate(line *queue.Line) powGate {
	return powGate{
		Gate:  pow.NewGate(line.Keys(), line.Now),
		line:  line,
		local: pow.NewSpentSet(powLocalSpent),
		now:   line.Now,
	}
}

// spendLocal is single use while Redis is down: per server only, at the
// room's base price (the network's count is in Redis).
func (g powGate) spendLocal(ctx context.Context, s queue.Settings, room, identity, payload string) error {
	c := pow.Client{Identity: identity}
	p, err := g.Checked(s, room, identity, payload)
	if err != nil {
		return g.Refuse(ctx, g.line, s, room, c, err)
	}
	if !p.Required {
		return nil
	}
	if p.ID == "" {
		return g.Refuse(ctx, g.line, s, room, c, queue.ErrProofRequired)
	}
	ok, full := g.local.Spend(room+"/"+p.ID, p.Expires, g.now())
	if full {
		return errUnavailable
	}
	if !ok {
		return g.Refuse(ctx, g.line, s, room, c, queue.ErrProofSpent)
	}
	return nil
}

// powError is a refusal for want of work as an answer, with the fresh
// challenge beside the error.
func powError(r *pow.Refusal) *apiError {
	ae := &apiError{Status: http.StatusForbidden, Code: r.Code, Message: r.Message, challenge: &r.Challenge}
	if r.Malformed {
		ae.Status = http.StatusBadRequest
	}
	if r.Code != pow.CodeRequired {
		ae.Field = "pow"
	}
	return ae
}

// challengeRooms is what the challenge handler needs: the room, from the
// cache first, so challenges are served while Redis is down.
type challengeRooms interface {
	roomReader
	cachedRooms
}

// handleChallenge: GET /api/rooms/:room/challenge (and …/embed/challenge):
// a fresh challenge for this visitor, whom it names (setting the visitor
// cookie or embed key as enter does), so clients can solve before entering.
func handleChallenge(line challengeRooms, ids identities, g powGate) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		s, ok := line.CachedSettings(room)
		if !ok {
			if s, err = line.Settings(c.Request().Context(), room); err != nil {
				return err
			}
		}
		identity, err := ids.forEnter(c, s, "") // a user token comes as Bearer
		if err != nil {
			return err
		}
		if err := g.take(c); err != nil {
			return err
		}
		ch, err := g.Challenge(c.Request().Context(), g.line, s, room, pow.Client{Identity: identity, Bucket: g.network(c)})
		if err != nil {
			return err
		}
		g.count(room, history.ChallengesIssued)
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, ch)
	}
}
