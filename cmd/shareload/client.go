package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/pow"
)

// client is one loopback address's: every connection it makes starts there,
// so the server counts it as that client.
type client struct {
	base, room string
	http       *http.Client
}

func newClient(base, room, from string) *client {
	d := &net.Dialer{Timeout: 15 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Control: loopbackOnly}
	tr := &http.Transport{Proxy: nil, DialContext: d.DialContext, MaxIdleConnsPerHost: 16, IdleConnTimeout: 10 * time.Second}
	return &client{base: base, room: room, http: &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// loopbackOnly refuses to connect anywhere but loopback.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("shareload: dial %q: not a loopback address", address)
	}
	return nil
}

// reply is an answer's status, body and visitor cookie.
type reply struct {
	status     int
	body       []byte
	vid        string
	retryAfter time.Duration
}

func (c *client) do(ctx context.Context, method, path, cookie, bearer string, body any) (reply, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return reply{}, fmt.Errorf("shareload: build request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cookie != "" {
		req.Header.Set("Cookie", "wr_vid="+cookie)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("shareload: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return reply{}, fmt.Errorf("shareload: read %s %s: %w", method, path, err)
	}
	r := reply{status: resp.StatusCode, body: data}
	for _, ck := range resp.Cookies() {
		if ck.Name == "wr_vid" {
			r.vid = ck.Value
		}
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		r.retryAfter = time.Duration(s) * time.Second
	}
	return r, nil
}

// ticket is the part of a ticket answer this tool reads.
type ticket struct {
	Ticket    string   `json:"ticket"`
	State     string   `json:"state"`
	Reason    string   `json:"reason"`
	Position  int64    `json:"position"`
	EntryPos  int64    `json:"entry_position"`
	EtaS      *float64 `json:"eta_s"`
	EtaHighS  *float64 `json:"eta_high_s"`
	Token     string   `json:"token"`
	Challenge *pow.Challenge
}

// placed is one place taken: the ticket, the visitor's cookie, and what it
// cost (the last solution's price, the solving time, the solutions).
type placed struct {
	ticket
	cookie     string
	difficulty int64
	solving    time.Duration
	solutions  int
	limited    int // 429s met on the way (the challenge limit)
}

var errNoPlace = errors.New("shareload: no place")

// place takes one place as a new visitor: enter, solve the challenge the
// refusal carries on cores goroutines, enter with the solution; a dearer
// challenge (the network took places meanwhile) is solved again, and a 429
// waits its Retry-After. It gives up at ctx's end or after 8 solutions.
func (c *client) place(ctx context.Context, cores int) (placed, error) {
	var p placed
	path := "/api/rooms/" + c.room + "/enter"
	var body any
	for tries := 0; tries < 64 && p.solutions < 8; tries++ {
		r, err := c.do(ctx, http.MethodPost, path, p.cookie, "", body)
		if err != nil {
			return p, err
		}
		if r.vid != "" {
			p.cookie = r.vid
		}
		switch r.status {
		case http.StatusOK:
			if err := json.Unmarshal(r.body, &p.ticket); err != nil || p.Ticket == "" {
				return p, fmt.Errorf("shareload: enter answer %s: %w", r.body, errNoPlace)
			}
			return p, nil
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			p.limited++
			wait := max(r.retryAfter, 200*time.Millisecond)
			select {
			case <-ctx.Done():
				return p, ctx.Err()
			case <-time.After(wait):
			}
			continue
		case http.StatusForbidden:
		default:
			return p, fmt.Errorf("shareload: enter: status %d: %s: %w", r.status, bytes.TrimSpace(r.body), errNoPlace)
		}
		var refused struct {
			Challenge *pow.Challenge `json:"challenge"`
		}
		if json.Unmarshal(r.body, &refused) != nil || refused.Challenge == nil {
			return p, fmt.Errorf("shareload: enter: 403 without a challenge: %s: %w", bytes.TrimSpace(r.body), errNoPlace)
		}
		began := time.Now()
		solved, err := pow.Solve(ctx, *refused.Challenge, cores)
		p.solving += time.Since(began)
		p.solutions++
		if err != nil {
			return p, err
		}
		p.difficulty = refused.Challenge.Parameters.Difficulty
		body = map[string]string{"pow": solved.Encode()}
	}
	return p, errNoPlace
}

// read is a ticket's state now.
func (c *client) read(ctx context.Context, p placed) (ticket, error) {
	r, err := c.do(ctx, http.MethodGet, "/api/rooms/"+c.room+"/tickets/"+p.Ticket, p.cookie, "", nil)
	if err != nil {
		return ticket{}, err
	}
	var t ticket
	if r.status != http.StatusOK || json.Unmarshal(r.body, &t) != nil {
		return ticket{}, fmt.Errorf("shareload: ticket: status %d: %s", r.status, bytes.TrimSpace(r.body))
	}
	return t, nil
}

// admin GETs an admin API path of the room into out.
func (c *client) admin(ctx context.Context, token, suffix string, out any) error {
	var r reply
	var err error
	for try := range 5 { // a loaded machine can miss a dial's deadline
		if r, err = c.do(ctx, http.MethodGet, "/admin/api/rooms/"+c.room+suffix, "", token, nil); err == nil {
			break
		}
		time.Sleep(time.Duration(try+1) * time.Second)
	}
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("shareload: admin %s: status %d: %s", suffix, r.status, bytes.TrimSpace(r.body))
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		return fmt.Errorf("shareload: admin %s: %w", suffix, err)
	}
	return nil
}
