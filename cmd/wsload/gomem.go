package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// goMem is the server's Go memory as its /metrics shows it (loopback may
// read it by default): what the sockets cost the Go runtime, apart from the
// GC's headroom and freed pages that RSS also counts.
type goMem struct {
	HeapInuse  int64 `json:"heap_inuse"`  // go_memstats_heap_inuse_bytes
	StackInuse int64 `json:"stack_inuse"` // go_memstats_stack_inuse_bytes
	Goroutines int64 `json:"goroutines"`  // go_goroutines
}

// fetchGoMem reads the three gauges from base/metrics within 30 s (the
// handler reads Redis too, which is slow on a loaded machine).
func fetchGoMem(ctx context.Context, base string) (goMem, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return goMem{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return goMem{}, fmt.Errorf("wsload: read /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return goMem{}, fmt.Errorf("wsload: read /metrics: status %d", resp.StatusCode)
	}
	return parseGoMem(bufio.NewScanner(resp.Body))
}

func parseGoMem(sc *bufio.Scanner) (goMem, error) {
	var m goMem
	fields := map[string]*int64{
		"go_memstats_heap_inuse_bytes":  &m.HeapInuse,
		"go_memstats_stack_inuse_bytes": &m.StackInuse,
		"go_goroutines":                 &m.Goroutines,
	}
	found := 0
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		p := fields[name]
		if !ok || p == nil {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return goMem{}, fmt.Errorf("wsload: parse %s: %w", name, err)
		}
		*p = int64(f)
		found++
	}
	if err := sc.Err(); err != nil {
		return goMem{}, fmt.Errorf("wsload: read /metrics: %w", err)
	}
	if found < len(fields) {
		return goMem{}, fmt.Errorf("wsload: /metrics lacks the Go runtime gauges")
	}
	return m, nil
}

// fetchGoMems sums fetchGoMem over every server; one failing fails the sum.
func fetchGoMems(ctx context.Context, bases []string) (goMem, error) {
	var sum goMem
	for _, b := range bases {
		m, err := fetchGoMem(ctx, b)
		if err != nil {
			return goMem{}, err
		}
		sum.HeapInuse += m.HeapInuse
		sum.StackInuse += m.StackInuse
		sum.Goroutines += m.Goroutines
	}
	return sum, nil
}
