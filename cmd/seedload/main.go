// Command seedload reproduces the two tables of the seed post ("대기열,
// 시스템을 보호하라 (2)", shared/seeds/) against a waitroom on this machine.
//
//	seedload herd    checkout response times behind the gate: the room admits
//	                 50 every 1,000 ms without jitter (run A), then 10 every
//	                 200 ms with jitter (run B), the same 50/s, into a test
//	                 checkout this command serves (see checkout.go)
//	seedload polling the requests per second that waiters put on waitroom:
//	                 flat 5 s polling, flat 1 s polling, tiered polling
//	                 (next_update_ms) and push (WebSocket)
//	seedload crowd   a peer-style flash crowd: visitors arrive in groups at a
//	                 set pace into a room without proof of work and wait,
//	                 polling their ticket or on its WebSocket, until
//	                 admitted; what the servers spent per request
//
// Each prints its table and one JSON line. It only talks to loopback
// addresses, and every phase is bounded in count and time.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Hard ceilings, so that a typo cannot turn a benchmark into a flood.
const (
	maxVisitors = 20_000
	maxWindow   = 5 * time.Minute
)

// common are the flags both modes share.
type common struct {
	URL        string
	AdminToken string
	Room       string
	Visitors   int
	Enterers   int
	RampLimit  time.Duration
}

func (c *common) register(fs *flag.FlagSet, room string, visitors int) {
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "waitroom base URL; must be a loopback address")
	fs.StringVar(&c.AdminToken, "admin-token", "", "waitroom's admin token: the rooms are created and replaced with it")
	fs.StringVar(&c.Room, "room", room, "room to use (polling: the prefix of one room per mode)")
	fs.IntVar(&c.Visitors, "visitors", visitors, "visitors in the room per run")
	fs.IntVar(&c.Enterers, "enterers", 50, "visitors entering at once")
	fs.DurationVar(&c.RampLimit, "ramp-timeout", 2*time.Minute, "most time to enter all visitors of one run")
}

func (c *common) check() error {
	switch {
	case c.AdminToken == "":
		return errors.New("--admin-token: required")
	case c.Visitors < 1 || c.Visitors > maxVisitors:
		return fmt.Errorf("--visitors: want 1..%d", maxVisitors)
	case c.Enterers < 1 || c.Enterers > 500:
		return errors.New("--enterers: want 1..500")
	case c.RampLimit <= 0 || c.RampLimit > maxWindow:
		return fmt.Errorf("--ramp-timeout: want (0, %s]", maxWindow)
	}
	if err := checkLoopbackURL(c.URL); err != nil {
		return err
	}
	c.URL = strings.TrimRight(c.URL, "/")
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "seedload:", err)
		os.Exit(1)
	}
}

func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("want a mode: herd, polling or crowd")
	}
	var rep any
	switch args[0] {
	case "herd":
		c, err := parseHerd(args[1:], stderr)
		if err != nil {
			return err
		}
		r, err := runHerd(ctx, c, stderr)
		if err != nil {
			return err
		}
		printHerd(stdout, c, r)
		rep = r
	case "polling":
		c, err := parsePolling(args[1:], stderr)
		if err != nil {
			return err
		}
		r, err := runPolling(ctx, c, stderr)
		if err != nil {
			return err
		}
		printPolling(stdout, c, r)
		rep = r
	case "crowd":
		c, err := parseCrowd(args[1:], stderr)
		if err != nil {
			return err
		}
		r, err := runCrowd(ctx, c, stderr)
		if r != nil {
			printCrowd(stdout, c, r)
			rep = r
		}
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown mode %q: want herd, polling or crowd", args[0])
	}
	line, _ := json.Marshal(rep)
	fmt.Fprintln(stdout, string(line))
	return nil
}

// checkLoopbackURL accepts only http:// URLs on a loopback IP: seedload must
// never be pointed at someone else's server.
func checkLoopbackURL(raw string) error {
	if !strings.HasPrefix(raw, "http://") {
		return fmt.Errorf("--url %q: want http://", raw)
	}
	host := strings.TrimPrefix(raw, "http://")
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	return checkLoopbackAddr(host)
}

// checkLoopbackAddr accepts host:port with a loopback IP (no names: nothing
// to resolve differently later).
func checkLoopbackAddr(hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("%q: want host:port: %w", hostport, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: not a loopback IP address", hostport)
	}
	return nil
}

// loopbackOnly is a dialer Control hook: it checks the address actually being
// connected to.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	if err := checkLoopbackAddr(address); err != nil {
		return fmt.Errorf("seedload: dial: %w", err)
	}
	return nil
}
