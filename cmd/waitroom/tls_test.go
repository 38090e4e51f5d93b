package main

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/testcert"
)

// TestRunServesTLS: with --tls-cert and --tls-key the listener speaks HTTPS.
func TestRunServesTLS(t *testing.T) {
	cert := testcert.New(t)
	certPath, keyPath := cert.Files(t)
	pool := cert.Pool
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--embed-demo-addr", "off",
			"--tls-cert", certPath, "--tls-key", keyPath}, env(), io.Discard, func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	res, err := c.Get("https://" + addr + "/livez")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("https /livez: %v %v", res, err)
	}
	res.Body.Close()
	if res, err := http.Get("http://" + addr + "/livez"); err == nil && res.StatusCode == 200 {
		t.Fatal("plain HTTP answered on the TLS listener")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
