package memstore

import (
	"context"

	"github.com/waitroom/waitroom/queue"
)

// listenBuffer bounds each listener's backlog; as with Redis pub/sub, a
// listener that falls behind loses events rather than slowing the line.
const listenBuffer = 1024

type event struct {
	room    string
	adm     []queue.Admitted
	changed bool // settings changed; else adm were admitted
}

type listener struct{ ch chan event }

// publish hands ev to every listener without blocking; s.mu must not be held.
func (s *Store) publish(ev event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		select {
		case l.ch <- ev:
		default:
		}
	}
}

// Listen delivers admissions and settings changes until ctx ends.
func (s *Store) Listen(ctx context.Context, onAdmit func(room string, adm []queue.Admitted), onRoom func(room string)) error {
	l := &listener{ch: make(chan event, listenBuffer)}
	s.mu.Lock()
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-l.ch:
			if ev.changed {
				onRoom(ev.room)
			} else {
				onAdmit(ev.room, ev.adm)
			}
		}
	}
}
