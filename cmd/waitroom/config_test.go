package main

import (
	"context"
	"fmt"
	"io"
	"os"
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
	if c.BodyTimeout != 10*time.Second || c.PushPerTicket != 4 || c.PushPerIP != 100 || c.MaxConns.set ||
		c.MaxConnsPerIP.set || c.IdleTimeout != 15*time.Second {
		t.Fatalf("limit defaults: %+v", c)
	}
	if c.DegradeAfter != time.Second {
		t.Fatalf("--degrade-after default %v, want 1s", c.DegradeAfter)
	}
	if c, err := parseConfig([]string{"--degrade-after", "3s"}, env("WAITROOM_DEGRADE_AFTER", "2s"), io.Discard); err != nil || c.DegradeAfter != 3*time.Second {
		t.Fatalf("--degrade-after over its environment twin: %v %v", c.DegradeAfter, err)
	}
	if c, err := parseConfig(nil, env("WAITROOM_PUSH_PER_IP", "0", "WAITROOM_MAX_CONNS", "500", "WAITROOM_MAX_CONNS_PER_IP", "40",
		"WAITROOM_IDLE_TIMEOUT", "3s"), io.Discard); err != nil || c.PushPerIP != 0 || c.MaxConns != (autoInt{true, 500}) ||
		c.MaxConnsPerIP != (autoInt{true, 40}) || c.IdleTimeout != 3*time.Second {
		t.Fatalf("limits from the environment: %+v %v", c, err)
	}
	if c, err := parseConfig([]string{"--max-conns", "auto", "--max-conns-per-ip", "0"}, env("WAITROOM_MAX_CONNS", "500"), io.Discard); err != nil ||
		c.MaxConns.set || c.MaxConnsPerIP != (autoInt{true, 0}) {
		t.Fatalf("--max-conns auto over its environment twin: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--addr", "127.0.0.1:9000"},
		env("WAITROOM_ADDR", "127.0.0.1:7000", "WAITROOM_REDIS_URL", "redis://127.0.0.1:6379/2", "WAITROOM_PUBLIC_URL", "https://q.example/",
			"WAITROOM_KAFKA_BROKERS", "127.0.0.1:9092"), io.Discard)
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
		{[]string{"--server-id", "a b"}, env(), "--server-id"},
		{nil, env("WAITROOM_SERVER_ID", strings.Repeat("x", 129)), "--server-id"},
		{[]string{"--redis-url", "http://x"}, env(), "--redis-url"},
		{nil, env("WAITROOM_REDIS_URL", "mysql://x"), "--redis-url"},
		{[]string{"--admin-token", "short"}, env(), "--admin-token"},
		// 20 hex characters were enough once; 80 bits are not now.
		{[]string{"--admin-token", "0123456789abcdef0123"}, env(), "--admin-token (WAITROOM_ADMIN_TOKEN): 20 characters of hex carry at most 80 bits, want 128"},
		{nil, env("WAITROOM_ADMIN_TOKEN", "0123456789abcdef0123456789abcde"), "WAITROOM_ADMIN_TOKEN): 31 characters of hex"},
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
		{[]string{"--degrade-after", "50ms"}, env(), "--degrade-after 50ms: want between 100ms and 1m0s"},
		{nil, env("WAITROOM_DEGRADE_AFTER", "2m"), "--degrade-after"},
		{nil, env("WAITROOM_DEGRADE_AFTER", "soon"), "WAITROOM_DEGRADE_AFTER"},
		{[]string{"--challenges-per-ip", "0"}, env(), "--challenges-per-ip"},
		{[]string{"--network-ipv4-prefix", "33"}, env(), "--network-ipv4-prefix"},
		{nil, env("WAITROOM_CHALLENGES_PER_IP", "-5"), "--challenges-per-ip"},
		{nil, env("WAITROOM_PUSH_PER_IP", "-5"), "--push-per-ip"},
		{[]string{"--max-conns", "-1"}, env(), "--max-conns"},
		{[]string{"--max-conns", "many"}, env(), "want a whole number or auto"},
		{nil, env("WAITROOM_MAX_CONNS", "lots"), "WAITROOM_MAX_CONNS"},
		{[]string{"--max-conns-per-ip", "-1"}, env(), "--max-conns-per-ip -1"},
		{nil, env("WAITROOM_MAX_CONNS_PER_IP", "x"), "WAITROOM_MAX_CONNS_PER_IP"},
		{[]string{"--idle-timeout", "500ms"}, env(), "--idle-timeout 500ms: want between 1s and 10m"},
		{nil, env("WAITROOM_IDLE_TIMEOUT", "11m"), "--idle-timeout"},
		{[]string{"--history-keep", "30m"}, env(), "--history-keep 30m0s: want between 1h and 8760h"},
		{nil, env("WAITROOM_HISTORY_KEEP", "9000h"), "--history-keep"},
		{[]string{"--admin-failures-per-ip", "0"}, env(), "--admin-failures-per-ip"},
		// Fail closed: a real Redis needs real brokers, or the in-process one by name.
		{[]string{"--redis-url", "redis://127.0.0.1:6379/0"}, env(), "--kafka-brokers: required with --redis-url"},
		{[]string{"--kafka-brokers", "k:9092", "--kafka-sasl", "gssapi", "--kafka-username", "u", "--kafka-password", "p"}, env(), "--kafka-sasl"},
		{[]string{"--kafka-brokers", "k:9092", "--kafka-sasl", "scram-sha-512"}, env(), "needs --kafka-username"},
		{[]string{"--kafka-brokers", "k:9092", "--kafka-username", "u"}, env(), "only apply with --kafka-sasl"},
		{[]string{"--kafka-brokers", "embedded", "--kafka-tls"}, env(), "in-process broker has neither"},
		{[]string{"--tls-cert", "c.pem"}, env(), "--tls-key"},
		{[]string{"--redis-url", "redis://127.0.0.1:6379/0", "--kafka-brokers", "k:9092", "--redis-sentinel-password", "x"}, env(), "?master=NAME"},
	} {
		_, err := parseConfig(tc.args, tc.env, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.args, err, tc.want)
		}
	}
}

// Every bad setting is named in one start, from the environment and flags
// alike, so an operator fixes them all at once.
func TestConfigReportsEveryErrorAtOnce(t *testing.T) {
	_, err := parseConfig([]string{"--addr", "nope", "--log-level", "loud", "--idle-timeout", "500ms"},
		env("WAITROOM_MAX_CONNS", "lots", "WAITROOM_DEGRADE_AFTER", "soon"), io.Discard)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"--addr", "--log-level", "--idle-timeout", "WAITROOM_MAX_CONNS", "WAITROOM_DEGRADE_AFTER"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestRedisOptions(t *testing.T) {
	o, err := redisOptions("redis://u:p@127.0.0.1:7000,127.0.0.1:7001/0")
	if err != nil || len(o.Addrs) != 2 || o.Password != "p" {
		t.Fatalf("cluster: %+v %v", o, err)
	}
	if _, err := redisOptions("redis://127.0.0.1:7000,127.0.0.1:7001/2"); err == nil || !strings.Contains(err.Error(), "only database 0") {
		t.Fatalf("cluster with database 2: %v", err)
	}
	if o, err := redisOptions("redis://127.0.0.1:26379,127.0.0.1:26380/2?master=mymaster"); err != nil || o.DB != 2 {
		t.Fatalf("sentinel with database 2: %+v %v", o, err)
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

// TestConfigNeverEchoesURLSecrets: a malformed Redis URL is reported
// without its password or user information, however it is malformed.
func TestConfigNeverEchoesURLSecrets(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	for _, raw := range []string{
		"redis://admin:" + secret + "@127.0.0.1:bad/0",
		"redis://admin:" + secret + "@127.0.0.1:6379/notadb",
		"redis://admin:" + secret + "@127.0.0.1:6379,nohostport/0",
		"redis://admin:" + secret + "@[::1/0",
		"mysql://admin:" + secret + "@127.0.0.1/0",
		"redis://:" + secret + "@127.0.0.1:6379/0?pool_size=x",
	} {
		_, err := parseConfig([]string{"--redis-url", raw, "--kafka-brokers", "k:9092"}, env(), io.Discard)
		if err == nil {
			t.Errorf("%q was accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "admin:") {
			t.Errorf("the error repeats the URL's secret: %v", err)
		}
		if !strings.Contains(err.Error(), "--redis-url") {
			t.Errorf("the error does not name the flag: %v", err)
		}
	}
	// Through run as well: the message a failed start prints.
	err := run(context.Background(), []string{"--redis-url", "redis://u:" + secret + "@h:x/0", "--kafka-brokers", "k:9092"}, env(), io.Discard, nil)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("run: %v", err)
	}
}

func TestConfigKafkaAndSentinelSecurity(t *testing.T) {
	c, err := parseConfig([]string{"--redis-url", "redis://127.0.0.1:26379/0?master=m", "--redis-sentinel-password", "sp",
		"--kafka-brokers", "k:9093", "--kafka-tls-ca", "ca.pem", "--kafka-sasl", "scram-sha-256"},
		env("WAITROOM_KAFKA_USERNAME", "u", "WAITROOM_KAFKA_PASSWORD", "p"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.KafkaTLS || c.KafkaUsername != "u" || c.RedisSentinelPassword != "sp" || c.embeddedBroker() {
		t.Fatalf("%+v", c)
	}
	for _, mech := range []string{"plain", "scram-sha-256", "scram-sha-512"} {
		a, err := kafkaAuth(config{KafkaSASL: mech, KafkaUsername: "u", KafkaPassword: "p"})
		if err != nil || a.SASL == nil || a.TLS != nil {
			t.Errorf("%s: %+v %v", mech, a, err)
		}
	}
	if c, _ := parseConfig([]string{"--kafka-brokers", "embedded", "--redis-url", "redis://127.0.0.1:6379/0"}, env(), io.Discard); !c.embeddedBroker() || c.brokers() != nil {
		t.Fatalf("embedded by name: %+v", c)
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

// FuzzRedisURLNeverEchoesPassword: whatever the URL, an error about it
// never contains its password.
func FuzzRedisURLNeverEchoesPassword(f *testing.F) {
	for _, seed := range [][3]string{
		{"admin", "s3cr3t", "127.0.0.1:6379/0"},
		{"admin", "s3cr3t", "127.0.0.1:bad/0"},
		{"", "s3cr3t", "h:1/notadb"},
		{"u", "p@ss/w?rd#x", "h:1/0"},
		{"u", "pass%zz", "h:1/0"},
		{"u", "secret", "[::1/0"},
		{"u", "secret", "h:1,h2/0?pool_size=x"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, user, pass, rest string) {
		if len(pass) < 4 || strings.Contains(rest, pass) || strings.Contains(user, pass) || strings.Contains("redis://:@", pass) {
			return // a password that is also the rest of the URL cannot be told apart
		}
		raw := "redis://" + user + ":" + pass + "@" + rest
		if _, err := redisOptions(raw); err != nil && strings.Contains(err.Error(), pass) {
			t.Fatalf("the error for %q shows the password: %v", raw, err)
		}
	})
}

// TestConfigServerID: named by the flag or its twin, or unique per process
// by default, so two servers on one host never share a lease.
func TestConfigServerID(t *testing.T) {
	a, err := parseConfig(nil, env(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseConfig(nil, env(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if a.ServerID == "" || a.ServerID == b.ServerID || !strings.Contains(a.ServerID, fmt.Sprintf("-%d-", os.Getpid())) {
		t.Fatalf("default server ids: %q, %q", a.ServerID, b.ServerID)
	}
	c, err := parseConfig(nil, env("WAITROOM_SERVER_ID", "web-1"), io.Discard)
	if err != nil || c.ServerID != "web-1" {
		t.Fatalf("server id from the environment: %q %v", c.ServerID, err)
	}
}

func TestConnCapFollowsTheFileLimit(t *testing.T) {
	for _, tc := range []struct {
		flag  autoInt
		limit uint64
		want  int
		err   string
	}{
		{autoInt{}, 20000, 18000, ""},     // a tenth kept back
		{autoInt{}, 1024, 512, ""},        // at least 512
		{autoInt{}, 600, 300, ""},         // half of a small limit
		{autoInt{}, 1 << 20, 100_000, ""}, // memory bounds it where descriptors do not
		{autoInt{}, 0, 20_000, ""},        // limit unknown
		{autoInt{true, 18000}, 20000, 18000, ""},
		{autoInt{true, 0}, 20000, 0, ""}, // the operator's explicit "no cap"
		// The set-up: a cap equal to the file limit leaves nothing for Redis.
		{autoInt{true, 20000}, 20000, 0, "--max-conns 20000: over the 18000 connections this process may hold: its open-file limit 20000 less 2000"},
	} {
		got, err := connCap(tc.flag, tc.limit)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("connCap(%v, %d): error %v, want %q", tc.flag, tc.limit, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("connCap(%v, %d) = %d, %v; want %d", tc.flag, tc.limit, got, err, tc.want)
		}
	}
}

func TestPerClientCapDefault(t *testing.T) {
	for _, tc := range []struct {
		flag     autoInt
		maxConns int
		want     int
	}{
		{autoInt{}, 18000, 1000},
		{autoInt{}, 300, 75}, // one address never holds the whole server
		{autoInt{}, 2, 1},
		{autoInt{}, 0, 1000},
		{autoInt{true, 0}, 300, 0},
		{autoInt{true, 500}, 300, 500}, // as the operator said
	} {
		if got := perClientCap(tc.flag, tc.maxConns); got != tc.want {
			t.Errorf("perClientCap(%v, %d) = %d, want %d", tc.flag, tc.maxConns, got, tc.want)
		}
	}
}
