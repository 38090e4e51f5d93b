package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/segmentio/kafka-go"
)

// ViewFileName is the view's file inside the data directory.
const ViewFileName = "intents-view.db"

// viewRetention bounds the view: intents older than this are forgotten
// (degraded mode is an outage's worth of orders, not an archive).
const viewRetention = 7 * 24 * time.Hour

// The view is every server's intents as Kafka carries them, so any server
// answers GET /api/intents/{id}: rows come from the intents topic (room,
// visitor) and the results topic (status), in whichever order they arrive.
const viewSchema = `
CREATE TABLE IF NOT EXISTS view (
	id          TEXT    PRIMARY KEY,
	room        TEXT    NOT NULL DEFAULT '',
	visitor     TEXT    NOT NULL DEFAULT '',
	status      TEXT    NOT NULL DEFAULT 'published',
	reason      TEXT    NOT NULL DEFAULT '',
	accepted_at INTEGER NOT NULL DEFAULT 0,
	seen_at     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS view_seen ON view (seen_at);
`

// View keeps the intents of every server, read from Kafka in a consumer
// group of this server's own, in a SQLite file beside the outbox.
type View struct {
	db  *sql.DB
	rc  kafka.ReaderConfig
	log *slog.Logger
	now func() time.Time
}

// ViewConfig says where the view's messages come from.
type ViewConfig struct {
	Brokers      []string
	IntentsTopic string
	ResultsTopic string
	GroupID      string // this server's own group: every server reads every message
	Auth         KafkaAuth
	Logger       *slog.Logger
}

// OpenView opens (creating when absent) the view in dir.
func OpenView(dir string, cfg ViewConfig) (*View, error) {
	if len(cfg.Brokers) == 0 || cfg.GroupID == "" {
		return nil, errors.New("outbox: view: brokers and group are required")
	}
	if cfg.IntentsTopic == "" {
		cfg.IntentsTopic = DefaultIntentsTopic
	}
	if cfg.ResultsTopic == "" {
		cfg.ResultsTopic = DefaultResultsTopic
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, ViewFileName)+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, fmt.Errorf("outbox: view: open: %w", err)
	}
	db.SetMaxOpenConns(4)
	if _, err := db.Exec(viewSchema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("outbox: view: schema: %w", err)
	}
	log := cfg.Logger
	rc := kafka.ReaderConfig{
		Brokers: cfg.Brokers, Dialer: cfg.Auth.Dialer(), GroupID: cfg.GroupID,
		GroupTopics: []string{cfg.IntentsTopic, cfg.ResultsTopic},
		StartOffset: kafka.FirstOffset, MinBytes: 1, MaxBytes: 4 << 20, MaxWait: 500 * time.Millisecond,
		CommitInterval:   time.Second, // the view is rebuilt from Kafka: re-reading is harmless
		JoinGroupBackoff: 500 * time.Millisecond,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			log.Debug("outbox: view: kafka", "msg", fmt.Sprintf(msg, args...))
		}),
	}
	if err := rc.Validate(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("outbox: view: %w", err)
	}
	return &View{db: db, rc: rc, log: log, now: time.Now}, nil
}

// Close closes the file; call it after Run returned.
func (v *View) Close() error { return v.db.Close() }

// Get returns an intent another server took, as Kafka tells it: published
// until a result arrives. Payload is not kept.
func (v *View) Get(ctx context.Context, id string) (Intent, error) {
	var in Intent
	var status string
	var accepted int64
	err := v.db.QueryRowContext(ctx, `SELECT id, room, visitor, status, reason, accepted_at FROM view WHERE id = ? AND visitor != ''`, id).
		Scan(&in.ID, &in.Room, &in.Visitor, &status, &in.Reason, &accepted)
	if errors.Is(err, sql.ErrNoRows) {
		return Intent{}, fmt.Errorf("outbox: view: %w", ErrNotFound)
	}
	if err != nil {
		return Intent{}, fmt.Errorf("outbox: view: get: %w", err)
	}
	in.Status = Status(status)
	in.AcceptedAt = time.UnixMicro(accepted).UTC()
	return in, nil
}

// Run reads both topics until ctx ends.
func (v *View) Run(ctx context.Context) error {
	r := kafka.NewReader(v.rc)
	defer func() { _ = r.Close() }()
	lastPrune := time.Time{}
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			v.log.Warn("outbox: view: read", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(fetchRetry):
			}
			continue
		}
		if err := v.apply(ctx, m); err != nil && ctx.Err() == nil {
			v.log.Warn("outbox: view: apply", "topic", m.Topic, "offset", m.Offset, "err", err)
		}
		if now := v.now(); now.Sub(lastPrune) > time.Hour {
			lastPrune = now
			if _, err := v.db.ExecContext(ctx, `DELETE FROM view WHERE seen_at < ?`, now.Add(-viewRetention).UnixMicro()); err != nil && ctx.Err() == nil {
				v.log.Warn("outbox: view: prune", "err", err)
			}
		}
	}
}

func (v *View) apply(ctx context.Context, m kafka.Message) error {
	now := v.now().UnixMicro()
	if m.Topic == v.rc.GroupTopics[0] {
		var in IntentMessage
		if err := json.Unmarshal(m.Value, &in); err != nil || in.IntentID == "" {
			return nil // not ours to judge; consumers skip it too
		}
		_, err := v.db.ExecContext(ctx, `INSERT INTO view (id, room, visitor, accepted_at, seen_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET room = excluded.room, visitor = excluded.visitor, accepted_at = excluded.accepted_at`,
			in.IntentID, in.Room, in.Visitor, in.AcceptedAt.UnixMicro(), now)
		return err
	}
	var res ResultMessage
	if err := json.Unmarshal(m.Value, &res); err != nil || res.IntentID == "" ||
		(res.Status != ResultProcessed && res.Status != ResultRejected) {
		return nil
	}
	// The first result wins, as in the outbox: a final status stays.
	_, err := v.db.ExecContext(ctx, `INSERT INTO view (id, status, reason, seen_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, reason = excluded.reason
		WHERE view.status = 'published'`, res.IntentID, res.Status, res.Reason, now)
	return err
}
