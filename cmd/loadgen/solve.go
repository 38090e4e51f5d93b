package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/waitroom/waitroom/internal/pow"
)

// enterSolving is one scripted attacker's place: enter as a new visitor, get
// refused with a challenge (and a visitor cookie), solve it on cores
// goroutines, and enter again with the solution. It records "challenge" (the
// refusal), "solve" (status 200 when solved) and "enter" (the place).
func (t *target) enterSolving(ctx context.Context, st *workerState, cores int) {
	path := t.base.Scheme + "://" + t.base.Host + t.path("/api/rooms/"+t.room+"/enter")
	status, body, h, err := t.post(ctx, path, "", nil)
	st.rec.add("challenge", time.Since(st.sched), status)
	if err != nil || status != http.StatusForbidden {
		return
	}
	var refused struct {
		Challenge *pow.Challenge `json:"challenge"`
	}
	if json.Unmarshal(body, &refused) != nil || refused.Challenge == nil {
		return
	}
	cookie := ""
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "wr_vid" {
			cookie = c.Value
		}
	}
	began := time.Now()
	solved, err := pow.Solve(ctx, *refused.Challenge, cores)
	if err != nil {
		st.rec.add("solve", time.Since(began), 0)
		return
	}
	st.rec.add("solve", time.Since(began), http.StatusOK)
	payload, _ := json.Marshal(map[string]string{"pow": solved.Encode()})
	sent := time.Now()
	status, _, _, _ = t.post(ctx, path, cookie, payload)
	st.rec.add("enter", time.Since(sent), status)
}

// post sends one JSON POST with net/http (the solver's path: its cost is the
// work, not the client).
func (t *target) post(ctx context.Context, u, cookie string, body []byte) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, t.to)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("loadgen: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if cookie != "" {
		req.Header.Set("Cookie", "wr_vid="+cookie)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("loadgen: POST %s: %w", u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("loadgen: read POST %s: %w", u, err)
	}
	return resp.StatusCode, data, resp.Header, nil
}
