package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestConfigDefaultsEnvAndFlags(t *testing.T) {
	c, err := parseConfig(nil, env(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.PublicURL != "http://127.0.0.1:8080" || c.SigningKey != "data/signing-key.pem" {
		t.Fatalf("defaults: %+v", c)
	}
	if c.BodyTimeout != 10*time.Second || c.PushPerTicket != 4 || c.PushPerIP != 100 || c.MaxConns != 20000 {
		t.Fatalf("limit defaults: %+v", c)
	}
	if c, err := parseConfig(nil, env("WAITROOM_PUSH_PER_IP", "0", "WAITROOM_MAX_CONNS", "500"), io.Discard); err != nil || c.PushPerIP != 0 || c.MaxConns != 500 {
		t.Fatalf("limits from the environment: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--addr", "127.0.0.1:9000"},
		env("WAITROOM_ADDR", "127.0.0.1:7000", "WAITROOM_REDIS_URL", "redis://127.0.0.1:6379/2", "WAITROOM_PUBLIC_URL", "https://q.example/"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9000" {
		t.Fatalf("flag must win over env: %s", c.Addr)
	}
	if c.RedisURL != "redis://127.0.0.1:6379/2" || c.PublicURL != "https://q.example" {
		t.Fatalf("env: %+v", c)
	}
}

func TestConfigRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  func(string) string
		want string
	}{
		{[]string{"--addr", "nope"}, env(), "--addr"},
		{[]string{"--redis-url", "http://x"}, env(), "--redis-url"},
		{nil, env("WAITROOM_REDIS_URL", "mysql://x"), "--redis-url"},
		{[]string{"--admin-token", "short"}, env(), "--admin-token"},
		{[]string{"--public-url", "ftp://x"}, env(), "--public-url"},
		{[]string{"--log-format", "xml"}, env(), "--log-format"},
		{[]string{"--log-level", "loud"}, env(), "--log-level"},
		{[]string{"--redis-url", "redis://a:1,b"}, env(), "--redis-url"},
		{[]string{"stray"}, env(), "unexpected argument"},
		{[]string{"--upstream", "http://127.0.0.1:9"}, env(), "--protect"},
		{[]string{"--upstream", "http://127.0.0.1:9", "--protect", "/checkout/*"}, env(), "--gate-room"},
		{[]string{"--upstream", "ftp://x", "--protect", "/c/*", "--gate-room", "demo"}, env(), "--upstream"},
		{[]string{"--protect", "/checkout/*"}, env(), "only apply with --upstream"},
		{[]string{"--body-timeout", "0s"}, env(), "--body-timeout"},
		{nil, env("WAITROOM_BODY_TIMEOUT", "11m"), "--body-timeout"},
		{[]string{"--push-per-ticket", "-1"}, env(), "--push-per-ticket"},
		{[]string{"--pow-pool-size", "0"}, env(), "--pow-pool-size"},
		{nil, env("WAITROOM_POW_POOL_RATE", "0.5"), "--pow-pool-rate"},
		{[]string{"--pow-pool-rate", "NaN"}, env(), "--pow-pool-rate"},
		{nil, env("WAITROOM_PUSH_PER_IP", "-5"), "--push-per-ip"},
		{[]string{"--max-conns", "-1"}, env(), "--max-conns"},
		{[]string{"--admin-failures-per-ip", "0"}, env(), "--admin-failures-per-ip"},
		{nil, env("WAITROOM_ADMIN_FAILURES_TOTAL", "-5"), "--admin-failures-total"},
	} {
		_, err := parseConfig(tc.args, tc.env, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.args, err, tc.want)
		}
	}
}

func TestRedisOptions(t *testing.T) {
	o, err := redisOptions("redis://u:p@127.0.0.1:7000,127.0.0.1:7001/0")
	if err != nil || len(o.Addrs) != 2 || o.Password != "p" {
		t.Fatalf("cluster: %+v %v", o, err)
	}
	o, err = redisOptions("redis://127.0.0.1:26379/0?master=mymaster")
	if err != nil || o.MasterName != "mymaster" || len(o.Addrs) != 1 {
		t.Fatalf("sentinel: %+v %v", o, err)
	}
	o, err = redisOptions("rediss://127.0.0.1:6380/3")
	if err != nil || o.TLSConfig == nil || o.DB != 3 {
		t.Fatalf("tls: %+v %v", o, err)
	}
}

func TestConfigGateFlags(t *testing.T) {
	c, err := parseConfig([]string{"--upstream", "http://127.0.0.1:9000", "--protect", "/checkout/*", "--protect", "/api/orders", "--gate-room", "demo"},
		env("WAITROOM_PROTECT", "/ignored/*"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Protect.String(); got != "/checkout/*,/api/orders" {
		t.Fatalf("protect %q: the command line must replace the environment twin", got)
	}
	c, err = parseConfig(nil, env("WAITROOM_UPSTREAM", "http://127.0.0.1:9000", "WAITROOM_PROTECT", "/checkout/*,/cart", "WAITROOM_GATE_ROOM", "demo"), io.Discard)
	if err != nil || c.Protect.String() != "/checkout/*,/cart" {
		t.Fatalf("from the environment: %q %v", c.Protect.String(), err)
	}
}
