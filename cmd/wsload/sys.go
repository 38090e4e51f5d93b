package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// checkLoopbackURL refuses any target but a loopback one: this tool must
// never be pointed at someone else's server.
func checkLoopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("wsload: parse --url: %w", err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("wsload: --url %q: want http://", raw)
	}
	if err := checkLoopbackHost(u.Hostname()); err != nil {
		return nil, fmt.Errorf("wsload: --url %q: %w", raw, err)
	}
	return u, nil
}

// checkLoopbackHost accepts a loopback IP, or a name that resolves only to
// loopback addresses.
func checkLoopbackHost(host string) error {
	if host == "" {
		return fmt.Errorf("no host")
	}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return fmt.Errorf("%s is not a loopback address", ip)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return fmt.Errorf("resolve %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("resolve %q: no addresses", host)
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return fmt.Errorf("%s resolves to %s, not loopback", host, a.IP)
		}
	}
	return nil
}

// loopbackOnly is a dialer Control hook: it checks the address actually
// being connected to.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("wsload: dial %q: %w", address, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("wsload: dial %q: not a loopback address", address)
	}
	return nil
}

// procStat is what /proc tells of one process.
type procStat struct {
	RSS     int64   // VmRSS, bytes
	HWM     int64   // VmHWM (peak RSS), bytes
	Threads int64   // OS threads
	CPU     float64 // user+system seconds so far
	FDs     int     // open file descriptors
}

// readProc reads /proc/<pid>/status, /proc/<pid>/stat and, with fds set,
// counts /proc/<pid>/fd: listing tens of thousands of descriptors costs the
// kernel a noticeable share of a core, so the once-a-second sampler counts
// only now and then.
func readProc(pid int, fds bool) (procStat, error) {
	var s procStat
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			s.RSS = n << 10
		case "VmHWM":
			s.HWM = n << 10
		case "Threads":
			s.Threads = n
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	s.CPU, err = parseStatCPU(string(stat))
	if err != nil {
		return s, err
	}
	if !fds {
		return s, nil
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		s.FDs = len(ents)
	}
	return s, nil
}

// parseStatCPU returns utime+stime in seconds from a /proc/<pid>/stat line;
// the command name in parentheses may hold spaces, so fields count from its
// closing parenthesis. USER_HZ is 100 on Linux.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("wsload: odd /proc stat line")
	}
	f := strings.Fields(stat[i+1:])
	// After ")": state(3) ppid(4) ... utime(14) stime(15): indexes 11 and 12.
	if len(f) < 13 {
		return 0, fmt.Errorf("wsload: short /proc stat line")
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	s, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("wsload: bad /proc stat times")
	}
	return (u + s) / 100, nil
}

// redisInfo is one INFO ALL reply: plain fields, and calls by command.
type redisInfo struct {
	Fields map[string]string
	Calls  map[string]int64 // cmdstat_<name>: calls=
}

func (r redisInfo) int(k string) int64 {
	n, _ := strconv.ParseInt(r.Fields[k], 10, 64)
	return n
}

func (r redisInfo) float(k string) float64 {
	n, _ := strconv.ParseFloat(r.Fields[k], 64)
	return n
}

// fetchRedisInfo asks a loopback Redis for INFO ALL over one short-lived
// connection.
func fetchRedisInfo(addr string) (redisInfo, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return redisInfo{}, fmt.Errorf("wsload: --redis-addr %q: %w", addr, err)
	}
	if err := checkLoopbackHost(host); err != nil {
		return redisInfo{}, fmt.Errorf("wsload: --redis-addr %q: %w", addr, err)
	}
	d := net.Dialer{Timeout: 5 * time.Second, Control: loopbackOnly}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return redisInfo{}, fmt.Errorf("wsload: redis: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "*2\r\n$4\r\nINFO\r\n$3\r\nALL\r\n"); err != nil {
		return redisInfo{}, fmt.Errorf("wsload: redis: %w", err)
	}
	body, err := readBulk(bufio.NewReader(conn))
	if err != nil {
		return redisInfo{}, fmt.Errorf("wsload: redis INFO: %w", err)
	}
	return parseRedisInfo(body), nil
}

// readBulk reads one RESP bulk string.
func readBulk(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "-") {
		return "", fmt.Errorf("%s", line[1:])
	}
	if !strings.HasPrefix(line, "$") {
		return "", fmt.Errorf("unexpected reply %q", line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		return "", fmt.Errorf("unexpected reply %q", line)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func parseRedisInfo(body string) redisInfo {
	info := redisInfo{Fields: map[string]string{}, Calls: map[string]int64{}}
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if name, ok := strings.CutPrefix(k, "cmdstat_"); ok {
			for kv := range strings.SplitSeq(v, ",") {
				if n, ok := strings.CutPrefix(kv, "calls="); ok {
					info.Calls[name], _ = strconv.ParseInt(n, 10, 64)
				}
			}
			continue
		}
		info.Fields[k] = v
	}
	return info
}

// readProcs sums readProc over several servers. With all set, any failure
// is an error; otherwise a server that is gone (killed on purpose) counts
// as nothing.
func readProcs(pids []int, all, fds bool) (procStat, error) {
	var sum procStat
	for _, pid := range pids {
		s, err := readProc(pid, fds)
		if err != nil {
			if all {
				return sum, err
			}
			continue
		}
		sum.RSS += s.RSS
		sum.HWM += s.HWM
		sum.Threads += s.Threads
		sum.CPU += s.CPU
		sum.FDs += s.FDs
	}
	return sum, nil
}
