package kafkatest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func TestStopRestartKeepsPortAndData(t *testing.T) {
	br := Start(t, "t")
	addr := br.Addrs()[0]
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Fatalf("broker on %s, want loopback", addr)
	}
	br.Write(t, "t", kafka.Message{Key: []byte("k"), Value: []byte("before")})

	br.Stop()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		conn.Close()
		t.Fatal("stopped broker still accepts connections")
	}
	// With acks the write must hear from the broker; without, it would
	// only fill a socket buffer and look fine.
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: "t", RequiredAcks: kafka.RequireAll, MaxAttempts: 1, BatchTimeout: time.Millisecond}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, kafka.Message{Value: []byte("while down")}); err == nil {
		t.Fatal("write to a stopped broker succeeded")
	}

	br.Restart()
	if got := br.Addrs()[0]; got != addr {
		t.Fatalf("restarted on %s, want %s", got, addr)
	}
	br.Write(t, "t", kafka.Message{Key: []byte("k"), Value: []byte("after")})
	msgs := br.Read(t, "t", 2)
	if string(msgs[0].Value) != "before" || string(msgs[1].Value) != "after" {
		t.Fatalf("read %q, %q; want before, after", msgs[0].Value, msgs[1].Value)
	}
}

func TestStopTwiceAndRestartRunning(t *testing.T) {
	br := Start(t)
	br.Restart() // running: no-op
	br.Stop()
	br.Stop()
	br.Restart()
	conn, err := net.DialTimeout("tcp", br.Addrs()[0], time.Second)
	if err != nil {
		t.Fatal(errors.Join(errors.New("restarted broker refuses connections"), err))
	}
	conn.Close()
}
