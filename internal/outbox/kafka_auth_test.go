package outbox_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit/testcert"
)

// TestKafkaSASLAgainstTheBroker: the publisher (writer transport) and the
// view (reader dialer) authenticate with each mechanism against an
// in-process broker that requires SASL; a wrong password is refused.
func TestKafkaSASLAgainstTheBroker(t *testing.T) {
	for _, tc := range []struct{ flag, kfake string }{
		{outbox.SASLPlain, "PLAIN"},
		{outbox.SASLSCRAMSHA256, "SCRAM-SHA-256"},
		{outbox.SASLSCRAMSHA512, "SCRAM-SHA-512"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			b, err := outbox.StartEmbedded(outbox.EmbeddedConfig{
				Topics: []string{outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic},
				SASL:   []outbox.SASLUser{{Mechanism: tc.kfake, User: "waitroom", Password: "right-password"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			wrong, err := outbox.NewSASL(tc.flag, "waitroom", "wrong-password")
			if err != nil {
				t.Fatal(err)
			}
			bad, _ := outbox.NewKafkaPublisher(outbox.KafkaConfig{Brokers: b.Addrs(), WriteTimeout: 2 * time.Second,
				Auth: outbox.KafkaAuth{SASL: wrong}})
			defer bad.Close()
			in := outbox.Intent{ID: "00000000-0000-4000-8000-000000000001", Room: "sale", Visitor: "v1",
				Payload: payload(1), AcceptedAt: time.Now().UTC()}
			if _, err := bad.Publish(ctx, []outbox.Intent{in}); err == nil {
				t.Fatal("a wrong password was let in")
			}

			right, err := outbox.NewSASL(tc.flag, "waitroom", "right-password")
			if err != nil {
				t.Fatal(err)
			}
			auth := outbox.KafkaAuth{SASL: right}
			pub, _ := outbox.NewKafkaPublisher(outbox.KafkaConfig{Brokers: b.Addrs(), WriteTimeout: 5 * time.Second, Auth: auth})
			defer pub.Close()
			if _, err := pub.Publish(ctx, []outbox.Intent{in}); err != nil {
				t.Fatalf("publish with SASL: %v", err)
			}
			v, err := outbox.OpenView(outbox.ViewConfig{Brokers: b.Addrs(), GroupID: "view-" + strings.ToLower(tc.kfake), Auth: auth, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			vctx, vcancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = v.Run(vctx) }()
			defer func() { vcancel(); <-done; _ = v.Close() }()
			for {
				got, err := v.Get(ctx, in.ID)
				if err == nil {
					if got.Visitor != "v1" || got.Status != outbox.StatusPublished {
						t.Fatalf("read back %+v", got)
					}
					break
				}
				if !errors.Is(err, outbox.ErrNotFound) || ctx.Err() != nil {
					t.Fatalf("the reader never read the intent with SASL: %v", err)
				}
				time.Sleep(20 * time.Millisecond) // the view fills from Kafka in its own time
			}
		})
	}
}

// TestKafkaTLSAgainstTheBroker: with the broker listening with TLS, the
// publisher gets through with the CA trusted, and not without it.
func TestKafkaTLSAgainstTheBroker(t *testing.T) {
	cert := testcert.New(t)
	pool := cert.Pool
	b, err := outbox.StartEmbedded(outbox.EmbeddedConfig{
		Topics: []string{outbox.DefaultIntentsTopic},
		TLS:    cert.Server(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := outbox.Intent{ID: "00000000-0000-4000-8000-000000000002", Room: "sale", Visitor: "v1", Payload: payload(1), AcceptedAt: time.Now().UTC()}

	untrusted, _ := outbox.NewKafkaPublisher(outbox.KafkaConfig{Brokers: b.Addrs(), WriteTimeout: 2 * time.Second,
		Auth: outbox.KafkaAuth{TLS: &tls.Config{MinVersion: tls.VersionTLS12}}})
	defer untrusted.Close()
	if _, err := untrusted.Publish(ctx, []outbox.Intent{in}); err == nil {
		t.Fatal("published to a broker whose certificate is not trusted")
	}
	pub, _ := outbox.NewKafkaPublisher(outbox.KafkaConfig{Brokers: b.Addrs(), WriteTimeout: 5 * time.Second,
		Auth: outbox.KafkaAuth{TLS: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}}})
	defer pub.Close()
	if _, err := pub.Publish(ctx, []outbox.Intent{in}); err != nil {
		t.Fatalf("publish over TLS: %v", err)
	}
}
