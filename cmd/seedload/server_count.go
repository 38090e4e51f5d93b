package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// serverSnapshot is what the server side has counted so far.
type serverSnapshot struct {
	logSize       int64   // bytes of the access log
	pushMessages  float64 // waitroom_push_messages_total
	redisCommands int64   // total_commands_processed
	cpu           float64 // waitroom's user+system seconds
}

func (c pollingConfig) snapshot(ctx context.Context, a *api) (serverSnapshot, error) {
	var s serverSnapshot
	fi, err := os.Stat(c.AccessLog)
	if err != nil {
		return s, fmt.Errorf("access log: %w", err)
	}
	s.logSize = fi.Size()
	if s.pushMessages, err = scrapeCounter(ctx, a, "waitroom_push_messages_total"); err != nil {
		return s, err
	}
	if c.RedisAddr != "" {
		rdb := redis.NewClient(&redis.Options{Addr: c.RedisAddr})
		defer rdb.Close()
		info, err := rdb.Info(ctx, "stats").Result()
		if err != nil {
			return s, fmt.Errorf("redis info: %w", err)
		}
		s.redisCommands, _ = strconv.ParseInt(infoField(info, "total_commands_processed"), 10, 64)
	}
	if c.ServerPID > 0 {
		if s.cpu, err = processCPU(c.ServerPID); err != nil {
			return s, err
		}
	}
	return s, nil
}

// readyMode is /readyz's mode (normal or degraded), or why it is unknown.
func readyMode(ctx context.Context, a *api) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/readyz", nil)
	if err != nil {
		return "unknown"
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return "unreachable"
	}
	defer resp.Body.Close()
	var v struct {
		Mode string `json:"mode"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&v) != nil || v.Mode == "" {
		return fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return v.Mode
}

// scrapeCounter reads one unlabelled series from waitroom's /metrics
// (loopback may scrape).
func scrapeCounter(ctx context.Context, a *api, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("metrics: no %s", name)
}

// infoField is one field of a Redis INFO answer.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// processCPU is a process's user+system CPU seconds from /proc.
func processCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("server cpu: %w", err)
	}
	// Fields after the command's closing parenthesis; utime and stime are
	// the 14th and 15th of the whole line, in clock ticks (100 a second).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("server cpu: unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("server cpu: unexpected /proc/%d/stat", pid)
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100, nil
}

// accessCounts is what the access log says of a room's API in a window.
type accessCounts struct {
	ByKind    map[string]int `json:"by_kind"`   // status, enter, ws, …
	ByStatus  map[string]int `json:"by_status"` // HTTP status
	PerSecond []int          `json:"-"`         // requests finished in each whole second of the log, ascending
}

func (a accessCounts) total() int {
	n := 0
	for _, v := range a.ByKind {
		n += v
	}
	return n
}

// countAccess counts the access lines written to the log between the two
// offsets for paths under prefix. A line cut at either end is not counted.
func countAccess(path string, from, to int64, prefix string) (accessCounts, error) {
	out := accessCounts{ByKind: map[string]int{}, ByStatus: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return out, fmt.Errorf("access log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(io.NewSectionReader(f, from, to-from))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	seconds := map[string]int{}
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first && from > 0 {
			first = false
			// from may fall inside a line; a whole line starts with time=.
			if !strings.HasPrefix(line, "time=") {
				continue
			}
		}
		a, ok := parseAccessLine(line)
		if !ok || !strings.HasPrefix(a.path, prefix) {
			continue
		}
		out.ByKind[requestKind(a.method, strings.TrimPrefix(a.path, prefix))]++
		out.ByStatus[strconv.Itoa(a.status)]++
		if a.second != "" {
			seconds[a.second]++
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("access log: %w", err)
	}
	for _, n := range seconds {
		out.PerSecond = append(out.PerSecond, n)
	}
	slices.Sort(out.PerSecond)
	return out, nil
}

// requestKind names a request of a room's visitor API by what it does.
func requestKind(method, rest string) string {
	switch {
	case rest == "enter":
		return "enter"
	case strings.HasSuffix(rest, "/ws"):
		return "ws"
	case strings.HasSuffix(rest, "/events"):
		return "sse"
	case strings.HasPrefix(rest, "tickets/") && method == http.MethodGet:
		return "status"
	}
	return "other"
}

type accessLine struct {
	method, path string
	status       int
	second       string // the time field to the second, "" if it has none
}

// parseAccessLine reads one line of waitroom's text access log (slog's
// TextHandler: key=value, values with spaces or quotes in Go quotes):
// msg=request with method, path and status.
func parseAccessLine(line string) (accessLine, bool) {
	var a accessLine
	isRequest := false
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		eq := strings.IndexByte(line, '=')
		if eq <= 0 {
			break
		}
		key := line[:eq]
		line = line[eq+1:]
		var val string
		if strings.HasPrefix(line, `"`) {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return a, false
			}
			line = line[len(q):]
			if val, err = strconv.Unquote(q); err != nil {
				return a, false
			}
		} else {
			end := strings.IndexByte(line, ' ')
			if end < 0 {
				end = len(line)
			}
			val, line = line[:end], line[end:]
		}
		switch key {
		case "time":
			// RFC 3339 to the second: 2006-01-02T15:04:05.
			if len(val) >= 19 {
				a.second = val[:19]
			}
		case "msg":
			isRequest = val == "request"
		case "method":
			a.method = val
		case "path":
			a.path = val
		case "status":
			a.status, _ = strconv.Atoi(val)
		}
	}
	return a, isRequest && a.method != "" && a.path != "" && a.status > 0
}
