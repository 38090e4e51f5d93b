package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPowChallenge: one client asking for challenges as fast as it can,
// over loopback, with no per-network limit: each costs an HMAC and the
// network's count (one Redis script). served/s is challenges handed out,
// answered/s all answers; cores is this process's CPU, server and client,
// over wall time.
//
//	go test ./server/ -run '^$' -bench PowChallenge -benchtime 2000x -count 1
func BenchmarkPowChallenge(b *testing.B) {
	for _, mode := range []string{"hmac"} {
		b.Run(mode, func(b *testing.B) {
			rdb := redistest.Shared(b).Client(b)
			keys, err := token.Generate()
			if err != nil {
				b.Fatal(err)
			}
			line := queue.NewLine(redisstore.New(rdb, redistest.Prefix(b)), keys, queue.LineOptions{})
			cfg := server.Config{AdminToken: adminToken}
			srv := server.New(line, cfg)
			ts := httptest.NewServer(srv)
			defer ts.Close()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = srv.Run(ctx) }()
			defer func() { cancel(); <-done }()
			req, _ := http.NewRequest("PUT", ts.URL+"/admin/api/rooms/sale", strings.NewReader(`{"bot_protection": {"proof_of_work": "on"}}`))
			req.Header.Set("Authorization", "Bearer "+adminToken)
			req.Header.Set("Content-Type", "application/json")
			if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode/100 != 2 {
				b.Fatalf("put room: %v %v", err, res)
			}
			client := &http.Client{}
			served := 0
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			for range b.N {
				res, err := client.Get(ts.URL + "/api/rooms/sale/challenge")
				if err != nil {
					b.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode == 200 {
					served++
				}
			}
			wall, cpu := time.Since(start), cpuTime()-cpu0
			b.ReportMetric(float64(served)/wall.Seconds(), "served/s")
			b.ReportMetric(float64(b.N)/wall.Seconds(), "answered/s")
			b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
