// Command shareload measures what one attacker address takes of a room
// against honest visitors (docs/benchmarks.md, "The attacker's share"). It
// plays one of two roles, so that a script can pin each to its own cores
// with taskset:
//
//   - attacker: from one loopback address, --workers places at once, each
//     solved with --cores goroutines, for --duration; it keeps its waiting
//     places alive (a ticket read every 10 s, as an open page would) but its
//     admitted places never come to checkout (a squatter).
//   - honest: visitors arrive at --rate a second from --addrs distinct
//     loopback addresses, each solving its own challenge on one goroutine at
//     the price it is quoted, waiting for admission (a ticket read a second),
//     arriving at checkout (POST /api/tokens/verify with the shop key),
//     staying --hold and completing. At --duration it reads the room's stats
//     (and the draw of a scheduled opening) and reports the shares; then it
//     waits up to --settle for the honest visitors still in line.
//
// It only talks to loopback addresses and stops by itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type config struct {
	URL, Room, Role, AdminToken string
	Addr                        string  // attacker: its address; honest: the first
	Addrs                       int     // honest: distinct addresses
	Rate                        float64 // honest: arrivals a second
	Workers, Cores              int     // attacker
	Duration, Settle, Hold      time.Duration
	JSON                        bool
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("shareload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "waitroom base URL; a loopback IP literal")
	fs.StringVar(&c.Room, "room", "share", "the room (created beforehand)")
	fs.StringVar(&c.Role, "role", "", "attacker or honest")
	fs.StringVar(&c.AdminToken, "admin-token", "", "honest: reads the room's stats, draw and shop key")
	fs.StringVar(&c.Addr, "addr", "", "attacker: its loopback address (127.0.0.2); honest: the first of --addrs (127.0.0.3)")
	fs.IntVar(&c.Addrs, "addrs", 200, "honest: distinct addresses, one after another from --addr")
	fs.Float64Var(&c.Rate, "rate", 1, "honest: arrivals a second")
	fs.IntVar(&c.Workers, "workers", 2, "attacker: places solved at once")
	fs.IntVar(&c.Cores, "cores", 1, "attacker: goroutines per solution")
	fs.DurationVar(&c.Duration, "duration", 2*time.Minute, "how long the attacker takes places and honest visitors arrive")
	fs.DurationVar(&c.Settle, "settle", time.Minute, "honest: how long after --duration to wait for visitors still in line")
	fs.DurationVar(&c.Hold, "hold", 30*time.Second, "honest: time at checkout before completing")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON line on stdout")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("shareload: unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

func (c *config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("shareload: "+format, args...)) }
	switch c.Role {
	case "attacker":
		if c.Addr == "" {
			c.Addr = "127.0.0.2"
		}
	case "honest":
		if c.Addr == "" {
			c.Addr = "127.0.0.3"
		}
		if c.AdminToken == "" {
			bad("--role honest needs --admin-token (it reads the stats and the shop key)")
		}
	default:
		bad("--role %q: want attacker or honest", c.Role)
	}
	if ip := net.ParseIP(c.Addr).To4(); ip == nil || !ip.IsLoopback() {
		bad("--addr %q: want an IPv4 loopback address", c.Addr)
	} else if int(ip[3])+c.Addrs-1 > 254 {
		bad("--addrs %d from %s: past 127.0.0.254", c.Addrs, c.Addr)
	}
	if c.Addrs < 1 {
		bad("--addrs: at least 1")
	}
	if c.Rate <= 0 || c.Rate > 50 {
		bad("--rate: above 0 and at most 50")
	}
	if c.Workers < 1 || c.Workers > 64 || c.Cores < 1 || c.Cores > 64 {
		bad("--workers, --cores: 1 to 64")
	}
	if c.Duration <= 0 || c.Duration > 15*time.Minute || c.Settle < 0 || c.Settle > 10*time.Minute {
		bad("--duration: up to 15m; --settle: up to 10m")
	}
	if c.Hold < 0 || c.Hold > 10*time.Minute {
		bad("--hold: up to 10m")
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme != "http" || net.ParseIP(u.Hostname()) == nil || !net.ParseIP(u.Hostname()).IsLoopback() {
		bad("--url %q: want http://<loopback IP>:port", c.URL)
	}
	if c.Room == "" || strings.ContainsAny(c.Room, "/?#") {
		bad("--room %q: want a room id", c.Room)
	}
	return errors.Join(errs...)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := parseConfig(os.Args[1:], os.Stderr)
	if err == nil {
		if c.Role == "attacker" {
			err = attack(ctx, c, os.Stdout)
		} else {
			err = honest(ctx, c, os.Stdout)
		}
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(1)
	}
}
