// Command waitroom runs the virtual waiting room.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/operator/metrics"
	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/roomsnap"
	"github.com/waitroom/waitroom/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil); err != nil {
		if !errors.Is(err, errHelp) {
			fmt.Fprintln(os.Stderr, "waitroom:", err)
		}
		os.Exit(1)
	}
}

var errHelp = errors.New("help requested")

// stdout is where --create-admin-token prints its token, alone on its
// line, so that TOKEN=$(waitroom --create-admin-token) works.
var stdout io.Writer = os.Stdout

// run starts waitroom and blocks until ctx ends. ready, when not nil, hears
// the listening address once the server takes requests (tests use it).
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready func(addr string)) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		if strings.Contains(err.Error(), "help requested") {
			return errHelp
		}
		return fmt.Errorf("config: %w", err)
	}
	if cfg.Version {
		ver, rev := buildVersion()
		_, _ = fmt.Fprintf(stderr, "waitroom %s %s\n", ver, rev)
		return nil
	}
	log := newLogger(cfg, stderr)
	useRedisLogger(log)
	if cfg.CreateSigningKey {
		return createSigningKey(cfg, log)
	}
	if cfg.CreateAdminToken {
		_, err := fmt.Fprintln(stdout, adminops.NewToken())
		return err
	}
	if cfg.AdminFailuresTotal != 0 {
		log.Warn("--admin-failures-total is no longer used: wrong admin tokens are counted per client network only, and the right token is never refused")
	}

	if cfg.AdminToken == "" && cfg.RedisURL != "" {
		return errors.New("config: --admin-token (WAITROOM_ADMIN_TOKEN) is required with a real Redis: " + adminops.TokenHowTo)
	}
	rdb, probeRdb, embedded, err := openRedis(cfg, log)
	if err != nil {
		return err
	}
	defer func() { _ = rdb.Close(); _ = probeRdb.Close() }()
	if embedded != nil {
		defer embedded.Close()
	}

	keys, err := loadSigningKey(cfg, embedded != nil, log)
	if err != nil {
		return err
	}
	keys.Issuer = cfg.PublicURL

	if cfg.AdminToken == "" {
		cfg.AdminToken = adminops.NewToken()
		log.Info("generated an admin token for this run", "admin_token", cfg.AdminToken)
	}

	avail := queue.NewAvailability(nil, log).SetDegradeAfter(cfg.DegradeAfter)
	rdb.AddHook(redisstore.Hook(avail)) // every Redis call's outcome feeds the flag
	store := redisstore.New(rdb, vocab.KeyPrefix)

	// m and srv are set below; the closures that use them run only once the
	// servers run.
	var m *metrics.Metrics
	var srv *server.Server
	var meter *gate.Meter
	var gateStats adaptive.GateStats // stays a nil interface without a gate
	if cfg.Upstream != "" {
		meter = gate.NewMeter(gate.MeterOptions{})
		gateStats = meter
	}
	ctl := adaptive.New(rdb, vocab.KeyPrefix, store, adaptive.Options{
		Logger: log, Signal: adaptive.DefaultSignals(gateStats),
		OnTransition: func(tr adaptive.Transition) { m.Transition(tr.Room, tr.Open) },
	})
	lineOpts := queue.LineOptions{Logger: log, LineOpen: ctl.Open, TokenInURL: cfg.TokenInURL}
	if embedded == nil {
		// The rooms this server knows, on its own disk: degraded mode serves
		// them after a restart during an outage, and they go back into a
		// Redis that lost its data. (Embedded mode's Redis dies with the
		// process; its demo room is seeded afresh.)
		snap, err := roomsnap.Open(filepath.Join(cfg.DataDir, roomsnap.FileName))
		if err != nil {
			return err
		}
		defer func() { _ = snap.Close() }()
		lineOpts.Snapshot = snap
	}
	line := queue.NewLine(store, keys, lineOpts)
	if embedded != nil {
		if err := seedDemoRoom(ctx, line, cfg.Demo); err != nil {
			return err
		}
	}

	ob, brokers, kauth, closeKafka, err := openOutbox(cfg, log, keys.Derive(outbox.KeySecretLabel), func(_ int, err error) {
		if err != nil {
			m.KafkaPublishError()
		}
	})
	if err != nil {
		return err
	}
	defer closeKafka()
	line.SetIntents(ob) // one order per visitor: an intent left while degraded counts at the line

	adm := queue.NewAdmitter(line)
	src := metrics.Sources{Rooms: store, Avail: avail, Outbox: ob, Activation: ctl, Logger: log, Admitter: adm,
		Hub: metrics.HubFunc(func() push.Stats { return srv.PushStats() })}
	if meter != nil {
		src.Gate = meter
	}
	reg := metrics.NewRegistry()
	bver, brev := buildVersion()
	if err := metrics.RegisterBuildInfo(reg, metrics.BuildInfo{Version: bver, Revision: brev}); err != nil {
		return err
	}
	if m, err = metrics.New(reg, src); err != nil {
		return err
	}
	rdb.AddHook(m.RedisHook())
	allow, _ := metrics.ParseAllow(cfg.MetricsAllow) // checked with the config

	hist := history.New(rdb, vocab.KeyPrefix, cfg.HistoryKeep, log)
	adminFailures := throttle.New(rdb, "admin", throttle.Options{Prefix: vocab.KeyPrefix, Logger: log,
		PerClient: throttle.Limit{N: cfg.AdminFailuresPerIP, Per: time.Minute}})
	// One count of challenges and solutions per client network, for the API
	// and the gate alike.
	challenges := throttle.New(rdb, "challenge", throttle.Options{Prefix: vocab.KeyPrefix, Logger: log,
		PerClient: throttle.Limit{N: cfg.ChallengesPerIP, Per: time.Minute}})
	srv = server.New(line, server.Config{
		AdminToken: cfg.AdminToken,
		Secure:     strings.HasPrefix(cfg.PublicURL, "https://"),
		Logger:     log,
		Ping:       func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
		Avail:      avail,
		Intents:    ob,
		Metrics:    m.Handler(metrics.Guard{Token: cfg.MetricsToken, Allow: allow}),

		TrustedProxies:  cfg.TrustedProxies,
		Limits:          server.Limits{BodyTimeout: cfg.BodyTimeout, PushPerTicket: cfg.PushPerTicket, PushPerIP: cfg.PushPerIP},
		AdminFailures:   adminFailures,
		AccessLog:       log,
		NetworkIPv4Bits: cfg.NetworkIPv4Bits,
		Challenges:      challenges,
		History:         hist,
		Figures:         hist,
	})
	waits := dashboard.NewWaitWindow(1000)
	dash := dashboard.New(dashboard.Deps{
		Waits: waits, History: hist,
		Line: line, AdminToken: cfg.AdminToken, Secure: strings.HasPrefix(cfg.PublicURL, "https://"),
		Logger: log, Avail: avail, Outbox: ob,
		Failures: adminFailures, Revocations: dashboard.NewRedisRevocations(rdb, vocab.KeyPrefix),
		Activation: dashboard.ActivationFunc(func(room string) (dashboard.Activation, bool) {
			st, ok := ctl.State(room)
			return dashboard.Activation{On: st.Open, Reason: st.Reason, Cause: st.Why.Cause, Reading: st.Why.Reading,
				Threshold: st.Why.Threshold, Windows: st.Why.Windows, SignalError: st.SignalError}, ok
		}),
	})
	srv.MountDashboard(dash.Handlers())

	maxConns, perClient, err := raiseAndCap(cfg, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	conns := server.NewConnListener(ln, server.ConnLimits{Max: maxConns, PerClient: perClient,
		Trusted: cfg.TrustedProxies, IdleTimeout: cfg.IdleTimeout, Logger: log})
	ln = conns
	var dm *demo
	if cfg.Demo {
		if dm, err = startDemo(ctx, srv, line, cfg, ln.Addr().String(), brokers, kauth, log); err != nil {
			_ = ln.Close()
			return err
		}
		defer func() { _ = dm.Close() }()
	}
	httpSrv := srv.HTTPServer(cfg.Addr)
	httpSrv.IdleTimeout, httpSrv.ConnState = cfg.IdleTimeout, conns.ConnState
	if cfg.Upstream != "" {
		if httpSrv.Handler, err = gateHandler(cfg, srv, line, meter, challenges, log); err != nil {
			_ = ln.Close()
			return err
		}
	}
	ver, rev := buildVersion()
	listening := []any{"addr", ln.Addr().String(), "public_url", cfg.PublicURL, "version", ver, "revision", rev, "tls", cfg.TLSCert != "",
		"dashboard", cfg.PublicURL + "/admin"}
	if embedded != nil { // only embedded mode seeds the demo room
		listening = append(listening, "waiting_page", cfg.PublicURL+"/rooms/demo", "api", cfg.PublicURL+"/api/rooms/demo/enter")
	}
	log.Info("waitroom is listening", listening...)
	if ready != nil {
		ready(ln.Addr().String())
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		serve := func() error { return httpSrv.Serve(ln) }
		if cfg.TLSCert != "" {
			serve = func() error { return httpSrv.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey) }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http: %w", err)
		}
		return nil
	})
	adm.ID = cfg.ServerID
	adm.Degraded = avail.Degraded
	adm.OnTick = func(room string, _ queue.Settings, r queue.TickResult) {
		for _, w := range r.Waits {
			m.ObserveWait(room, w)
		}
		waits.Observe(room, r.Waits...)
		hist.ObserveWaits(room, line.Now(), r.Waits...)
	}
	g.Go(func() error { retireOldRecords(gctx, store, log); return nil })
	g.Go(func() error { return adm.Run(gctx) })
	g.Go(func() error { return ctl.Run(gctx) })
	g.Go(func() error { return srv.Run(gctx) })
	g.Go(func() error { return dash.Run(gctx) })
	g.Go(func() error { return avail.Run(gctx, redisstore.New(probeRdb, vocab.KeyPrefix).Probe) })
	g.Go(func() error { return ob.Run(gctx) })
	if dm != nil {
		g.Go(func() error { return dm.run(gctx) })
	}
	g.Go(func() error {
		<-gctx.Done()
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close() // push sockets first: Shutdown does not close hijacked connections
		dash.Close()
		return httpSrv.Shutdown(sctx)
	})
	return g.Wait()
}

func newLogger(cfg config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openRedis connects to the configured Redis, or starts the in-process
// Redis-protocol server when none is given. The second client is the
// availability probe's own connection (redisstore.ProbeOptions).
func openRedis(cfg config, log *slog.Logger) (rdb, probe redis.UniversalClient, _ io.Closer, _ error) {
	if cfg.RedisURL == "" {
		mr, err := startEmbeddedRedis()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("embedded redis: %w", err)
		}
		log.Warn("EMBEDDED MODE: no --redis-url given, so an in-process Redis-protocol server (miniredis) holds the line; data lives in memory and is lost on exit. Give --redis-url for production.",
			"redis_addr", mr.Addr())
		opts := &redis.UniversalOptions{Addrs: []string{mr.Addr()}}
		return redisstore.NewClient(opts), redis.NewUniversalClient(redisstore.ProbeOptions(*opts)),
			closerFunc(mr.Close), nil
	}
	opts, err := redisOptions(cfg.RedisURL)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("config: --redis-url: %w", err)
	}
	opts.SentinelPassword = cfg.RedisSentinelPassword
	probe = redis.NewUniversalClient(redisstore.ProbeOptions(*opts))
	rdb = redisstore.NewClient(opts)
	log.Info("using Redis", "addrs", opts.Addrs, "master", opts.MasterName)
	return rdb, probe, nil, nil
}

type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

// seedDemoRoom creates the demo room of embedded mode unless it exists; with
// the demo its checkout is the demo shop.
func seedDemoRoom(ctx context.Context, line *queue.Line, withShop bool) error {
	if _, err := line.StoredSettings(ctx, "demo"); err == nil {
		return nil
	}
	s := queue.DefaultSettings()
	s.Title = queue.TextByLang(map[string]string{"en": "Demo flash sale", "ko": "데모 반짝 세일"})
	s.Message = queue.TextByLang(map[string]string{
		"en": "Thanks for waiting. We let shoppers in a few at a time so checkout stays fast for everyone.",
		"ko": "기다려 주셔서 감사합니다. 결제가 모두에게 빠르도록 몇 분씩 차례로 입장합니다.",
	})
	if withShop {
		demoRoom(&s)
	}
	if err := line.PutRoom(ctx, "demo", s); err != nil {
		return fmt.Errorf("seed demo room: %w", err)
	}
	return nil
}

// openOutbox opens the degraded path's durable outbox under the data dir and
// its Kafka clients, starting an in-process Kafka-protocol broker when no
// brokers are given. The returned func closes the outbox, then the broker.
func openOutbox(cfg config, log *slog.Logger, keySecret []byte, onPass func(int, error)) (*outbox.Outbox, []string, outbox.KafkaAuth, func(), error) {
	brokers := cfg.brokers()
	stopBroker := func() {}
	var auth outbox.KafkaAuth
	if cfg.embeddedBroker() {
		b, err := startEmbeddedBroker(filepath.Join(cfg.DataDir, "kafka"), []string{cfg.KafkaTopic, cfg.KafkaResultsTopic})
		if err != nil {
			return nil, nil, auth, nil, err
		}
		brokers, stopBroker = b.Addrs(), b.Close
		log.Warn("EMBEDDED MODE: an in-process Kafka-protocol broker (kfake, one node, no replication) carries degraded-mode intents. Give --kafka-brokers for production.",
			"kafka_addr", strings.Join(brokers, ","), "dir", filepath.Join(cfg.DataDir, "kafka"))
	} else {
		var err error
		if auth, err = kafkaAuth(cfg); err != nil {
			return nil, nil, auth, nil, err
		}
	}
	group, err := resultsGroup(cfg.DataDir)
	if err != nil {
		stopBroker()
		return nil, nil, auth, nil, err
	}
	ob, err := outbox.Open(outbox.Config{
		Dir: cfg.DataDir, Brokers: brokers, Auth: auth, IntentsTopic: cfg.KafkaTopic, ResultsTopic: cfg.KafkaResultsTopic,
		// The view commits no offsets (it is rebuilt from the start of both
		// topics at each start); a new group name leaves behind the offsets
		// the view of older versions committed.
		ResultsGroup: group, ViewGroup: group + ".intents-view", Logger: log, OnPass: onPass, KeySecret: keySecret,
	})
	if err != nil {
		stopBroker()
		return nil, nil, auth, nil, fmt.Errorf("outbox: %w", err)
	}
	log.Info("outbox ready", "path", filepath.Join(cfg.DataDir, outbox.FileName), "brokers", strings.Join(brokers, ","), "topic", cfg.KafkaTopic,
		"results_group", group, "kafka_tls", auth.TLS != nil, "kafka_sasl", cfg.KafkaSASL)
	return ob, brokers, auth, func() {
		if err := ob.Close(); err != nil {
			log.Warn("close outbox", "err", err)
		}
		stopBroker()
	}, nil
}

// gateHandler puts the gate in front of the upstream checkout: waitroom's own
// paths (its route table, the demo shop's rows included) go to waitroom,
// everything else through the gate,
// outside echo so waitroom's body limit and frame headers never touch
// upstream traffic.
func gateHandler(cfg config, srv *server.Server, line *queue.Line, meter *gate.Meter, challenges gate.Challenges, log *slog.Logger) (http.Handler, error) {
	up, err := url.Parse(cfg.Upstream)
	if err != nil {
		return nil, fmt.Errorf("gate: upstream: %w", err)
	}
	proxy, err := gate.NewProxy(gate.ProxyConfig{
		Upstream: up, Protect: cfg.Protect.Paths(), Complete: cfg.GateComplete.Paths(),
		Room: cfg.GateRoom, Line: line, PublicURL: cfg.PublicURL, Meter: meter, Logger: log,
		ClientIP:   clientip.Extractor(cfg.TrustedProxies),
		Challenges: challenges, NetworkIPv4Bits: cfg.NetworkIPv4Bits,
	})
	if err != nil {
		return nil, err
	}
	log.Info("gate in front of the upstream", "upstream", cfg.Upstream, "protect", cfg.Protect.String(), "room", cfg.GateRoom)
	return gate.Split(srv, proxy, srv.Paths())
}
