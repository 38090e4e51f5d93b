package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/operator/metrics"
	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// config is everything waitroom reads at start, from flags and their
// WAITROOM_* environment twins (flags win).
type config struct {
	Addr       string
	RedisURL   string
	AdminToken string
	SigningKey string
	DataDir    string
	PublicURL  string
	LogFormat  string
	LogLevel   string

	KafkaBrokers      string
	KafkaTopic        string
	KafkaResultsTopic string
	KafkaTLS          bool
	KafkaTLSCA        string
	KafkaSASL         string
	KafkaUsername     string
	KafkaPassword     string

	RedisSentinelPassword string

	// TLSCert and TLSKey serve the listener over TLS; both or neither.
	TLSCert string
	TLSKey  string

	// CreateSigningKey writes a new signing key file and exits.
	CreateSigningKey bool
	// CreateAdminToken prints a new admin token and exits.
	CreateAdminToken bool
	// Version prints the version and exits.
	Version bool

	MetricsToken string
	MetricsAllow string

	// TrustedProxies are the peers whose X-Forwarded-For names the client.
	TrustedProxies []netip.Prefix
	trustedProxies string

	// TokenInURL makes the admitted visitor's redirect carry the entry
	// token (?wr_token=) instead of a single-use hand-off code (?wr_code=).
	TokenInURL bool

	Upstream     string
	Protect      gate.PathList
	GateComplete gate.PathList
	GateRoom     string

	// Demo mounts the demo shop (examples/shop) at /shop, its consumer of
	// the intents topic and the embed demo: embedded mode only.
	Demo          bool
	demo          autoBool
	EmbedDemoAddr string // the example shop that embeds the demo room; "" when off

	// Limits: what one client, and everyone together, can hold open.
	BodyTimeout   time.Duration
	PushPerTicket int
	PushPerIP     int
	// MaxConns caps open connections (auto: from the file limit, see
	// connCap); MaxConnsPerIP per client address; IdleTimeout is the
	// keep-alive wait, shortened under pressure (server.ConnListener).
	MaxConns      autoInt
	MaxConnsPerIP autoInt
	IdleTimeout   time.Duration

	// DegradeAfter is how long Redis calls must keep failing (timeouts), with
	// no answer in between, before this server switches to degraded mode.
	DegradeAfter time.Duration

	// HistoryKeep is how long a day of a room's per-minute history stays
	// in Redis after it ends (internal/operator/history).
	HistoryKeep time.Duration

	// ServerID names this server in the rooms' admitter leases (and their logs).
	ServerID string
	// Wrong admin tokens (API and dashboard sign-in) allowed per minute
	// per client network before 429. AdminFailuresTotal is no longer used
	// (there is no overall count): accepted so old configurations start.
	AdminFailuresPerIP int
	AdminFailuresTotal int
	// Proof-of-work challenges and solutions a client network may ask for
	// or send per minute (GCRA across servers, burst = the limit).
	ChallengesPerIP int
	// NetworkIPv4Bits: the IPv4 prefix one client network is priced by.
	NetworkIPv4Bits int
}

// defaultChallengesPerIP: 5 a second from one address once a burst of 300 is
// spent. A hundred visitors behind one NAT arriving at once ask for about
// two each (a challenge, a solution); a flood from one address costs the
// servers at most 5 scrypt runs a second (each checked solution runs one).
const defaultChallengesPerIP = 300

// embedded reports whether both Redis and Kafka run in this process.
func (c config) embedded() bool { return c.RedisURL == "" && c.embeddedBroker() }

// autoBool is a bool flag whose default depends on other flags.
type autoBool struct{ set, v bool }

func (b *autoBool) String() string {
	if b == nil || !b.set {
		return "auto"
	}
	return strconv.FormatBool(b.v)
}

func (b *autoBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	b.set, b.v = true, v
	return nil
}

func (b *autoBool) IsBoolFlag() bool { return true }

// autoInt is an int flag whose default ("auto") is worked out at start.
type autoInt struct {
	set bool
	v   int
}

func (n *autoInt) String() string {
	if n == nil || !n.set {
		return "auto"
	}
	return strconv.Itoa(n.v)
}

func (n *autoInt) Set(s string) error {
	if s == "auto" {
		*n = autoInt{}
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number or auto")
	}
	*n = autoInt{set: true, v: v}
	return nil
}

// embeddedKafka is the --kafka-brokers value that asks for the in-process broker.
const embeddedKafka = "embedded"

// embeddedBroker reports whether the in-process Kafka-protocol broker runs:
// when asked for, or in fully embedded mode (no --redis-url, no brokers).
func (c config) embeddedBroker() bool {
	return c.KafkaBrokers == embeddedKafka || (c.KafkaBrokers == "" && c.RedisURL == "")
}

// brokers splits --kafka-brokers.
func (c config) brokers() []string {
	if c.KafkaBrokers == embeddedKafka {
		return nil
	}
	var out []string
	for _, b := range strings.Split(c.KafkaBrokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// envName is a flag's environment twin: --redis-url → WAITROOM_REDIS_URL.
func envName(flagName string) string {
	return "WAITROOM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("waitroom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.RedisURL, "redis-url", "", "Redis URL (redis:// or rediss://; several hosts for a cluster, ?master=NAME for Sentinel); empty runs an in-process Redis-protocol server")
	fs.StringVar(&c.AdminToken, "admin-token", "", "bearer token for the admin API and the dashboard, of 128 bits or more (see --create-admin-token); generated and printed in embedded mode when empty")
	fs.StringVar(&c.SigningKey, "signing-key", "", "PEM file of Ed25519 signing keys (first signs), shared by every server; must exist with --redis-url (see --create-signing-key), created when absent in embedded mode (default <data-dir>/signing-key.pem)")
	fs.StringVar(&c.DataDir, "data-dir", "data", "directory for the signing key and local data")
	fs.StringVar(&c.PublicURL, "public-url", "", "URL visitors reach this server at (default http://<addr>)")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.KafkaBrokers, "kafka-brokers", "", "Kafka bootstrap brokers, comma-separated host:port; \"embedded\" runs an in-process Kafka-protocol broker (the default without --redis-url; required with it)")
	fs.BoolVar(&c.KafkaTLS, "kafka-tls", false, "connect to Kafka over TLS")
	fs.StringVar(&c.KafkaTLSCA, "kafka-tls-ca", "", "PEM file of CA certificates Kafka's are checked against (implies --kafka-tls; default: the system's)")
	fs.StringVar(&c.KafkaSASL, "kafka-sasl", "", "Kafka SASL mechanism: plain, scram-sha-256 or scram-sha-512 (default: none)")
	fs.StringVar(&c.KafkaUsername, "kafka-username", "", "Kafka SASL user name")
	fs.StringVar(&c.KafkaPassword, "kafka-password", "", "Kafka SASL password")
	fs.StringVar(&c.RedisSentinelPassword, "redis-sentinel-password", "", "password of the Sentinels themselves (with ?master=NAME); the URL's password is Redis's")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate chain to serve HTTPS with (with --tls-key); default plain HTTP behind a TLS-terminating proxy")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&c.CreateSigningKey, "create-signing-key", false, "write a new signing key to --signing-key (unless it exists) and exit; copy it to every server")
	fs.BoolVar(&c.CreateAdminToken, "create-admin-token", false, "print a new admin token (128 random bits, 32 hex characters) and exit")
	fs.BoolVar(&c.Version, "version", false, "print the version and exit")
	fs.StringVar(&c.KafkaTopic, "kafka-topic", "waitroom.intents", "topic the degraded path's intents are published to")
	fs.StringVar(&c.KafkaResultsTopic, "kafka-results-topic", "waitroom.results", "topic checkout reports intent outcomes on")
	fs.Var(&c.demo, "demo", "mount the demo shop at /shop (its checkout, its consumer of the intents topic, the embed demo); default on in embedded mode, refused with --redis-url or real --kafka-brokers")
	fs.StringVar(&c.EmbedDemoAddr, "embed-demo-addr", "auto", "embedded mode: address of an example shop page that embeds the demo room; auto is the port after --addr's, off turns it off")
	fs.StringVar(&c.MetricsToken, "metrics-token", "", "bearer token /metrics requires (optional)")
	fs.StringVar(&c.MetricsAllow, "metrics-allow", "", "addresses or CIDRs allowed to scrape /metrics, comma-separated (default: loopback only, unless a token is set)")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", "", "addresses or CIDRs of proxies whose X-Forwarded-For names the client, comma-separated (default: none; the peer address is the client)")
	fs.IntVar(&c.AdminFailuresPerIP, "admin-failures-per-ip", throttle.DefaultPerClient.N, "wrong admin tokens a client address (IPv6: its /64) may send per minute before its wrong tokens get 429 (the right token is never refused)")
	fs.IntVar(&c.AdminFailuresTotal, "admin-failures-total", 0, "no longer used: there is no overall count of wrong admin tokens, so a flood cannot lock the operator out (accepted so old configurations start)")
	fs.BoolVar(&c.TokenInURL, "token-in-url", false, "send admitted visitors to target_url with the entry token itself (?wr_token=), for a checkout that verifies offline and cannot redeem the default single-use hand-off code (?wr_code=); the token then shows in logs and Referers")
	fs.StringVar(&c.Upstream, "upstream", "", "checkout URL to run the gate in front of (reverse-proxy mode); empty: no gate")
	fs.Var(&c.Protect, "protect", "path patterns the gate protects, comma-separated or repeated (e.g. /checkout/*,/api/orders)")
	fs.Var(&c.GateComplete, "gate-complete", "path patterns whose 2xx answer means the order is done, freeing the slot (optional)")
	fs.StringVar(&c.GateRoom, "gate-room", "", "room whose line the gate sends visitors to")
	fs.DurationVar(&c.BodyTimeout, "body-timeout", 10*time.Second, "how long a request (but a push stream) may take to send its body")
	fs.IntVar(&c.PushPerTicket, "push-per-ticket", 4, "open push connections (WebSocket, SSE) per ticket; the newest over it is refused (0: no cap)")
	fs.IntVar(&c.PushPerIP, "push-per-ip", 100, "open push connections per client address, IPv6 per /64 (0: no cap)")
	fs.IntVar(&c.NetworkIPv4Bits, "network-ipv4-prefix", 32, "the IPv4 prefix length one client network is counted by for a place's proof-of-work price and --challenges-per-ip (32: each address; IPv6 is counted per /64)")
	fs.IntVar(&c.ChallengesPerIP, "challenges-per-ip", defaultChallengesPerIP, "proof-of-work challenges asked for plus solutions sent, per minute, by one client address (IPv6: its /64), across servers (GCRA, burst = the limit); over it: 429")
	fs.Var(&c.MaxConns, "max-conns", "open connections of the whole server; at the cap a new one takes an idle kept-alive one's place, or is answered 503 and closed; auto: the open-file limit (raised to its hard limit at start) less a tenth, at least 512, kept for Redis, Kafka and the server's files, at most 100000; a number over that is refused at start (0: no cap)")
	fs.Var(&c.MaxConnsPerIP, "max-conns-per-ip", "open connections per client address (IPv6 per /64; the peer's: a --trusted-proxies peer is not capped); at the cap a new one takes the place of the address's oldest idle or silent one, or is answered 503; auto: 1000, or a quarter of --max-conns if less (0: no cap)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "how long a kept-alive connection may wait for its next request; 1s once the server holds half of --max-conns or its address half of --max-conns-per-ip")
	fs.DurationVar(&c.DegradeAfter, "degrade-after", queue.DefaultDegradeAfter, "how long Redis calls must keep failing, with no answer in between, before this server switches to degraded mode; a refused connection (Redis gone) switches after two calls")
	fs.DurationVar(&c.HistoryKeep, "history-keep", history.DefaultKeep, "how long a day of each room's per-minute history (the dashboard's charts over the whole sale, the report export) stays in Redis after it ends, 1h to 8760h")
	fs.StringVar(&c.ServerID, "server-id", "", "this server's name in the rooms' admitter leases and their logs, unique per process (default <hostname>-<pid>-<random>)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: waitroom [flags]\nEach flag can also be set with its WAITROOM_* environment variable (e.g. WAITROOM_REDIS_URL).\n\n")
		fs.PrintDefaults()
	}
	// Environment first, so that flags given on the command line override it.
	// Every bad setting is reported at once, not one per start.
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", envName(f.Name), err))
			}
		}
	})
	// Patterns on the command line replace their environment twin's.
	c.Protect.Seal()
	c.GateComplete.Seal()
	if err := fs.Parse(args); err != nil {
		return c, errors.Join(append(errs, err)...)
	}
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	return c, errors.Join(append(errs, c.validate())...)
}

func (c *config) validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("--addr %q: want host:port", c.Addr))
	}
	if c.RedisURL != "" {
		if _, err := redisOptions(c.RedisURL); err != nil {
			errs = append(errs, fmt.Errorf("--redis-url: %w", err))
		}
	}
	if c.RedisSentinelPassword != "" && (c.RedisURL == "" || !strings.Contains(c.RedisURL, "master=")) {
		errs = append(errs, errors.New("--redis-sentinel-password: only applies with a Sentinel --redis-url (?master=NAME)"))
	}
	if c.AdminToken != "" {
		if err := adminops.CheckToken(c.AdminToken); err != nil {
			errs = append(errs, fmt.Errorf("--admin-token (WAITROOM_ADMIN_TOKEN): %w", err))
		}
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir: must not be empty"))
	}
	if c.SigningKey == "" {
		c.SigningKey = filepath.Join(c.DataDir, "signing-key.pem")
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	} else if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("--public-url %q: want an absolute http(s) URL", c.PublicURL))
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	for _, b := range c.brokers() {
		if _, _, err := net.SplitHostPort(b); err != nil {
			errs = append(errs, fmt.Errorf("--kafka-brokers: %q: want host:port", b))
		}
	}
	if c.RedisURL != "" && c.KafkaBrokers == "" {
		// Fail closed: a production server must not quietly keep degraded
		// mode's orders in a single-node broker on its own disk.
		errs = append(errs, errors.New(`--kafka-brokers: required with --redis-url (or "embedded" for the in-process broker: one node, no replication, for trials)`))
	}
	if c.KafkaTLSCA != "" {
		c.KafkaTLS = true
	}
	switch c.KafkaSASL {
	case "":
		if c.KafkaUsername != "" || c.KafkaPassword != "" {
			errs = append(errs, errors.New("--kafka-username and --kafka-password: only apply with --kafka-sasl"))
		}
	case "plain", "scram-sha-256", "scram-sha-512":
		if c.KafkaUsername == "" || c.KafkaPassword == "" {
			errs = append(errs, fmt.Errorf("--kafka-sasl %s: needs --kafka-username and --kafka-password", c.KafkaSASL))
		}
	default:
		errs = append(errs, fmt.Errorf("--kafka-sasl %q: want plain, scram-sha-256 or scram-sha-512", c.KafkaSASL))
	}
	if c.embeddedBroker() && (c.KafkaTLS || c.KafkaSASL != "") {
		errs = append(errs, errors.New("--kafka-tls and --kafka-sasl: need --kafka-brokers (the in-process broker has neither)"))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("--tls-cert and --tls-key: give both or neither"))
	}
	if c.KafkaTopic == "" || c.KafkaResultsTopic == "" || c.KafkaTopic == c.KafkaResultsTopic {
		errs = append(errs, errors.New("--kafka-topic and --kafka-results-topic: must be set and differ"))
	}
	// --version, --create-signing-key and --create-admin-token run nothing,
	// so need no services.
	if !embeddedServices && !c.Version && !c.CreateSigningKey && !c.CreateAdminToken && (c.RedisURL == "" || c.embeddedBroker()) {
		errs = append(errs, errNotEmbedded)
	}
	c.Demo = c.embedded() && embeddedServices
	if c.demo.set {
		if c.demo.v && !c.Demo {
			// The demo shop would join the real intents topic and refuse
			// every real order, and serve /shop beside the real checkout.
			errs = append(errs, errors.New("--demo: the demo shop runs in embedded mode only (no --redis-url, no real --kafka-brokers)"))
		}
		c.Demo = c.demo.v && c.Demo
	}
	if addr, err := embedDemoAddr(c.EmbedDemoAddr, c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("--embed-demo-addr %q: %w", c.EmbedDemoAddr, err))
	} else {
		c.EmbedDemoAddr = addr
	}
	if p, err := clientip.ParseTrusted(c.trustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("--trusted-proxies: %w", err))
	} else {
		c.TrustedProxies = p
	}
	if _, err := metrics.ParseAllow(c.MetricsAllow); err != nil {
		errs = append(errs, fmt.Errorf("--metrics-allow: %w", err))
	}
	if c.Upstream != "" {
		if u, err := url.Parse(c.Upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--upstream %q: want an absolute http(s) URL", c.Upstream))
		}
		if len(c.Protect.Paths()) == 0 {
			errs = append(errs, errors.New("--protect: at least one path pattern is required with --upstream"))
		}
		if !queue.ValidRoomID(c.GateRoom) {
			errs = append(errs, fmt.Errorf("--gate-room %q: want a room id ([a-z0-9-]{1,64}) with --upstream", c.GateRoom))
		}
	} else if len(c.Protect.Paths()) > 0 || len(c.GateComplete.Paths()) > 0 || c.GateRoom != "" {
		errs = append(errs, errors.New("--protect, --gate-complete and --gate-room only apply with --upstream"))
	}
	if c.BodyTimeout < time.Second || c.BodyTimeout > 10*time.Minute {
		errs = append(errs, fmt.Errorf("--body-timeout %v: want between 1s and 10m", c.BodyTimeout))
	}
	if c.IdleTimeout < time.Second || c.IdleTimeout > 10*time.Minute {
		errs = append(errs, fmt.Errorf("--idle-timeout %v: want between 1s and 10m", c.IdleTimeout))
	}
	if c.HistoryKeep < time.Hour || c.HistoryKeep > 365*24*time.Hour {
		errs = append(errs, fmt.Errorf("--history-keep %v: want between 1h and 8760h", c.HistoryKeep))
	}
	if c.DegradeAfter < queue.MinDegradeAfter || c.DegradeAfter > queue.MaxDegradeAfter {
		errs = append(errs, fmt.Errorf("--degrade-after %v: want between %v and %v", c.DegradeAfter, queue.MinDegradeAfter, queue.MaxDegradeAfter))
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"--push-per-ticket", c.PushPerTicket}, {"--push-per-ip", c.PushPerIP}, {"--max-conns", c.MaxConns.v}, {"--max-conns-per-ip", c.MaxConnsPerIP.v}} {
		if n.v < 0 {
			errs = append(errs, fmt.Errorf("%s %d: want 0 (no cap) or more", n.name, n.v))
		}
	}
	if c.ServerID == "" {
		c.ServerID = defaultServerID()
	} else if !validServerID(c.ServerID) {
		errs = append(errs, fmt.Errorf("--server-id %q: want 1 to 128 printable characters without spaces", c.ServerID))
	}
	if (throttle.Limit{N: c.AdminFailuresPerIP, Per: time.Minute}).Validate() != nil {
		errs = append(errs, fmt.Errorf("--admin-failures-per-ip %d: want 1 to 1000000", c.AdminFailuresPerIP))
	}
	if c.NetworkIPv4Bits < 8 || c.NetworkIPv4Bits > 32 {
		errs = append(errs, fmt.Errorf("--network-ipv4-prefix %d: want 8 to 32", c.NetworkIPv4Bits))
	}
	if (throttle.Limit{N: c.ChallengesPerIP, Per: time.Minute}).Validate() != nil {
		errs = append(errs, fmt.Errorf("--challenges-per-ip %d: want 1 to 1000000", c.ChallengesPerIP))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format %q: want text or json", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.LogLevel))
	}
	return errors.Join(errs...)
}

// embedDemoAddr resolves --embed-demo-addr: "auto" is --addr's host with the
// next port (port 0 stays 0, for tests), "off" or "" is off.
func embedDemoAddr(v, addr string) (string, error) {
	switch v {
	case "", "off":
		return "", nil
	case "auto":
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return "", nil // --addr says what is wrong
		}
		p, err := strconv.Atoi(port)
		if err != nil || p == 0 || p == 65535 {
			return net.JoinHostPort(host, "0"), nil
		}
		return net.JoinHostPort(host, strconv.Itoa(p+1)), nil
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return "", errors.New("want host:port, auto or off")
	}
	return v, nil
}

// redisOptions turns a Redis URL into client options: one host is a single
// server, several hosts (comma-separated) a cluster, ?master=NAME Sentinel.
// Its errors never repeat the URL's password.
func redisOptions(raw string) (*redis.UniversalOptions, error) {
	o, err := parseRedisURL(raw)
	if err != nil {
		return nil, redactError(err, raw)
	}
	return o, nil
}

// redactError replaces the URL's user information, as written, in err's
// text: url.Parse and redis.ParseURL quote the URL in some errors. Should
// any piece of a password (3 characters or more) still show, the details
// are withheld altogether.
func redactError(err error, raw string) error {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = "not a URL: " + ue.Err.Error() // without the URL it quotes
	}
	var secrets []string
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		// Where the user information ends is ambiguous in a malformed URL:
		// take both readings.
		for _, at := range []int{strings.Index(rest, "@"), strings.LastIndex(rest, "@")} {
			if at > 0 {
				userinfo := rest[:at]
				secrets = append(secrets, userinfo)
				if _, pw, ok := strings.Cut(userinfo, ":"); ok {
					secrets = append(secrets, pw)
				}
			}
		}
	}
	if u, perr := url.Parse(raw); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			secrets = append(secrets, pw)
		}
	}
	for _, sec := range secrets {
		if sec != "" {
			msg = strings.ReplaceAll(msg, sec, "REDACTED")
		}
	}
	for _, sec := range secrets {
		if len(sec) >= 3 && strings.Contains(msg, sec) {
			return errors.New("malformed URL (details withheld: they would show its password)")
		}
	}
	return errors.New(msg)
}

func parseRedisURL(raw string) (*redis.UniversalOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("scheme %q: want redis:// or rediss://", u.Scheme)
	}
	hosts := strings.Split(u.Host, ",")
	master := u.Query().Get("master")
	q := u.Query()
	q.Del("master")
	u.RawQuery = q.Encode()
	u.Host = hosts[0]
	one, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, err
	}
	addrs := []string{one.Addr}
	for _, h := range hosts[1:] {
		if _, _, err := net.SplitHostPort(h); err != nil {
			return nil, fmt.Errorf("host %q: want host:port", h)
		}
		addrs = append(addrs, h)
	}
	if len(addrs) > 1 && master == "" && one.DB != 0 {
		// go-redis would quietly use database 0 of every shard.
		return nil, fmt.Errorf("database %d: a Redis Cluster (several hosts) has only database 0", one.DB)
	}
	o := &redis.UniversalOptions{
		Addrs: addrs, MasterName: master, DB: one.DB,
		Username: one.Username, Password: one.Password, TLSConfig: one.TLSConfig,
		PoolSize: one.PoolSize,
	}
	if !u.Query().Has("pool_size") {
		// One connection per concurrent request: go-redis's default (10 per
		// CPU) makes a flash crowd queue for connections.
		o.PoolSize = 256
	}
	return o, nil
}

// defaultServerID is unique per process: two servers on one host, or one
// restarted with the same pid, must not share a lease.
func defaultServerID() string {
	host, err := os.Hostname()
	if err != nil || !validServerID(host) {
		host = "waitroom"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), queue.RandomID()[:8])
}

func validServerID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}
