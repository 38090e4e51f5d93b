package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/pow"
)

// enterSolving is one scripted attacker's place: enter as a new visitor, get
// refused with a challenge (and a visitor cookie), solve it on cores
// goroutines, and enter again with the solution. A place's price rises with
// the places this address already holds, so a solution can come back
// refused with a dearer challenge (challenge_underpaid, when other workers
// took places meanwhile): it solves that one, up to solveTries times. It
// records "challenge" (the refusal), "solve" (status 200 when solved, per
// solution) and "enter" (the place).
func (t *target) enterSolving(ctx context.Context, st *workerState, cores int) {
	path := t.base.Scheme + "://" + t.base.Host + t.path("/api/rooms/"+t.room+"/enter")
	status, body, h, err := t.post(ctx, path, "", nil)
	st.rec.add("challenge", time.Since(st.sched), status)
	if err != nil || status != http.StatusForbidden {
		return
	}
	cookie := ""
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "wr_vid" {
			cookie = c.Value
		}
	}
	for range solveTries {
		ch := challengeIn(body)
		if ch == nil {
			return
		}
		began := time.Now()
		solved, err := pow.Solve(ctx, *ch, cores)
		if err != nil {
			st.rec.add("solve", time.Since(began), 0)
			return
		}
		st.rec.add("solve", time.Since(began), http.StatusOK)
		payload, _ := json.Marshal(map[string]string{"pow": solved.Encode()})
		sent := time.Now()
		status, body, _, _ = t.post(ctx, path, cookie, payload)
		if status != http.StatusForbidden || challengeIn(body) == nil {
			st.rec.add("enter", time.Since(sent), status)
			return
		}
	}
	st.rec.add("enter", 0, status)
}

// solveTries bounds the solutions one place may take.
const solveTries = 4

// challengeIn is the fresh challenge beside a refusal, if any.
func challengeIn(body []byte) *pow.Challenge {
	var refused struct {
		Challenge *pow.Challenge `json:"challenge"`
	}
	if json.Unmarshal(body, &refused) != nil {
		return nil
	}
	return refused.Challenge
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
