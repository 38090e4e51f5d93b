package push

// Open lists, by room, the tickets with at least one connection open on
// this hub: the server's sign of life for them (queue.Waiters).
func (h *Hub) Open() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string][]string, len(h.rooms))
	for name, r := range h.rooms {
		ids := make([]string, 0, len(r.tickets))
		for id := range r.tickets {
			ids = append(ids, id)
		}
		out[name] = ids
	}
	return out
}
