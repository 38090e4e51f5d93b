package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/queue"
)

// pushFetcher answers the hub's fetches from the line's waiters
// (queue.Waiters.Fetch: a waiting ticket's update from this server's view
// of the line, the others read from the store in one round trip), each
// rendered as the ticket JSON.
// bypassReader is what the push fetcher needs of the line besides its waiters.
type bypassReader interface {
	cachedRooms
	ticketViewer
}

type pushFetcher struct {
	line    bypassReader
	deg     degradeFlag
	waiters *queue.Waiters
}

var _ push.Fetcher = pushFetcher{}

func (f pushFetcher) Fetch(ctx context.Context, room string, ids []string) ([]push.Update, error) {
	if f.deg.Degraded() {
		return f.bypassed(room, ids)
	}
	ts, s, err := f.waiters.Fetch(ctx, room, ids)
	if err != nil {
		return nil, err
	}
	out := make([]push.Update, len(ts))
	for i, t := range ts {
		v, err := f.line.View(t, &s)
		if err == nil {
			out[i], err = pushUpdate(ids[i], v)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pushUpdate is a ticket's view as the hub sends it.
func pushUpdate(id string, v queue.View) (push.Update, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return push.Update{}, err
	}
	return push.Update{Ticket: id, State: v.State, Interval: v.NextUpdate(), Payload: data}, nil
}

// bypassed tells open pages to switch to the accept page: Redis is down.
func (f pushFetcher) bypassed(room string, ids []string) ([]push.Update, error) {
	out := make([]push.Update, len(ids))
	for i, id := range ids {
		v, err := bypassed(f.line, room, id)
		if err == nil {
			out[i], err = pushUpdate(id, v)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pushFirst is a push connection's first message, the ticket it was read
// from (none while degraded), and whether the line's waiters keep it
// (current: the hub takes it as the ticket's update until its tier slot).
// While degraded it is the bypassed answer, without asking Redis: the page
// then moves to the accept page over the connection it opened.
func pushFirst(c echo.Context, line statusReader, ids identities, deg degradeFlag, waiters *queue.Waiters) (room, id string, v queue.View, current bool, err error) {
	if deg.Degraded() {
		if room, err = roomParam(c); err != nil {
			return "", "", v, false, err
		}
		id = c.Param("ticket")
		if !hexid.Valid(id) {
			return "", "", v, false, errTicketNotFound
		}
		v, err = bypassed(line, room, id)
		return room, id, v, false, err
	}
	room, id, identity, err := ticketOwner(c, line, ids)
	if err != nil {
		return "", "", v, false, err
	}
	t, s, current, err := waiters.Connect(c.Request().Context(), room, id, identity)
	if err != nil {
		return "", "", v, false, err
	}
	v, err = line.View(t, &s)
	return t.Room, t.ID, v, current, err
}

// handlePush: GET /api/rooms/:room/tickets/:ticket/ws and …/events. Same
// visitor check as the status endpoint; the first message is sent at once.
// When the line's waiters keep the ticket it was read from, the hub is
// told that the message is current: the ticket's next update then comes
// at its tier slot from this server's view of the line, without reading
// the store a second time.
func handlePush(line statusReader, ids identities, deg degradeFlag, hub *push.Hub, waiters *queue.Waiters, sse bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		mark := hub.NoticeMark()
		room, id, v, current, err := pushFirst(c, line, ids, deg, waiters)
		if err != nil {
			return err
		}
		u, err := pushUpdate(id, v)
		if err != nil {
			return err
		}
		first := push.First{Payload: u.Payload}
		if current {
			first.State, first.Interval, first.Mark = u.State, u.Interval, mark
		}
		serve := hub.ServeWS
		if sse {
			serve = hub.ServeSSE
		}
		err = serve(c.Response(), c.Request(), room, id, first)
		if errors.Is(err, push.ErrClosed) {
			return errUnavailable
		}
		if err != nil && !errors.Is(err, push.ErrSlow) {
			return err
		}
		return nil
	}
}
