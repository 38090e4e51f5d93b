package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/hexid"
	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/queue"
)

// manyReader is what the push fetcher needs of the line.
type manyReader interface {
	ticketViewer
	cachedRooms
	StatusMany(ctx context.Context, room string, ids []string) ([]queue.Ticket, queue.Settings, error)
}

// pushFetcher reads the tickets of every due connection of a room in one
// pipelined round trip and renders each as the ticket JSON.
type pushFetcher struct {
	line manyReader
	deg  degradeFlag
}

var _ push.Fetcher = pushFetcher{}

func (f pushFetcher) Fetch(ctx context.Context, room string, ids []string) ([]push.Update, error) {
	if f.deg.Degraded() {
		return f.bypassed(room, ids)
	}
	ts, s, err := f.line.StatusMany(ctx, room, ids)
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

// pushFirst is a push connection's first message. While degraded it is the
// bypassed answer, without asking Redis: the page then moves to the accept
// page over the connection it opened.
func pushFirst(c echo.Context, line statusReader, ids identities, deg degradeFlag) (room, id string, v queue.View, err error) {
	if deg.Degraded() {
		if room, err = roomParam(c); err != nil {
			return "", "", v, err
		}
		id = c.Param("ticket")
		if !hexid.Valid(id) {
			return "", "", v, errTicketNotFound
		}
		v, err = bypassed(line, room, id)
		return room, id, v, err
	}
	t, s, err := ownTicket(c, line, ids)
	if err != nil {
		return "", "", v, err
	}
	v, err = line.View(t, &s)
	return t.Room, t.ID, v, err
}

// handlePush: GET /api/rooms/:room/tickets/:ticket/ws and …/events. Same
// visitor check as the status endpoint; the first message is sent at once.
func handlePush(line statusReader, ids identities, deg degradeFlag, hub *push.Hub, sse bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, id, v, err := pushFirst(c, line, ids, deg)
		if err != nil {
			return err
		}
		first, err := json.Marshal(v)
		if err != nil {
			return err
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
