package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// FileName is the outbox's file inside the data directory.
const FileName = "outbox.db"

// States as the table keeps them.
const (
	statePending   = "PENDING"
	statePublished = "PUBLISHED"
	stateProcessed = "PROCESSED"
	stateRejected  = "REJECTED"
)

var stateStatus = map[string]Status{
	statePending:   StatusAccepted,
	statePublished: StatusPublished,
	stateProcessed: StatusProcessed,
	stateRejected:  StatusRejected,
}

// The partial unique index is the rule "one open intent per visitor and
// room" kept by the database itself; the partial pending index keeps the
// relay's scan small however many final rows pile up.
const schema = `
CREATE TABLE IF NOT EXISTS intents (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	id           TEXT    NOT NULL UNIQUE,
	room         TEXT    NOT NULL,
	visitor      TEXT    NOT NULL,
	payload      BLOB    NOT NULL,
	state        TEXT    NOT NULL,
	reason       TEXT    NOT NULL DEFAULT '',
	accepted_at  INTEGER NOT NULL,
	published_at INTEGER,
	finished_at  INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS intents_open ON intents (room, visitor)
	WHERE state IN ('PENDING', 'PUBLISHED');
CREATE INDEX IF NOT EXISTS intents_pending ON intents (seq)
	WHERE state = 'PENDING';
CREATE INDEX IF NOT EXISTS intents_visitor ON intents (room, visitor);
CREATE TABLE IF NOT EXISTS probe (id INTEGER PRIMARY KEY, at INTEGER NOT NULL);
`

// Every connection waits for a lock rather than failing at once, and a
// COMMIT returns only after the WAL is synced.
const dsnPragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"

const intentColumns = `id, room, visitor, payload, state, reason, accepted_at, published_at, finished_at`

// SQLiteOptions tune a SQLiteStore; the zero value is ready to use.
type SQLiteOptions struct {
	Clock  clockwork.Clock // stamps accepted_at and the like; real time when nil
	Logger *slog.Logger    // slog.Default() when nil
	// MaxBatch bounds the writes grouped into one transaction; 0 means 512.
	MaxBatch int
	// KeySecret keys IdempotencyKey; every server must have the same one.
	KeySecret []byte
}

// SQLiteStore keeps the outbox in one SQLite file in WAL mode with
// synchronous=FULL: a COMMIT returns only once the WAL is on disk. All writes
// go through one goroutine that groups the callers waiting at that moment
// into one transaction, so one fsync serves many intents.
type SQLiteStore struct {
	path  string
	clock clockwork.Clock
	log   *slog.Logger

	wdb   *sql.DB // one connection, used only by the writer goroutine
	stmts *writeStmts
	rdb   *sql.DB // readers; WAL lets them run beside the writer
	get   *sql.Stmt
	find  *sql.Stmt
	pend  *sql.Stmt

	maxBatch int
	ops      chan *writeOp
	closing  chan struct{}
	stopped  chan struct{}
	close    sync.Once

	keySecret []byte

	mu     sync.Mutex
	counts Counts // kept by the writer after each COMMIT

	health writeHealth // write_health.go
}

var _ Store = (*SQLiteStore)(nil)

// OpenSQLite opens (creating when absent) the outbox at path, e.g.
// filepath.Join(dataDir, FileName).
func OpenSQLite(path string, opts SQLiteOptions) (*SQLiteStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("outbox: open: %w", err)
	}
	s := &SQLiteStore{
		path:      path,
		clock:     opts.Clock,
		log:       opts.Logger,
		maxBatch:  opts.MaxBatch,
		keySecret: opts.KeySecret,
		ops:       make(chan *writeOp),
		closing:   make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	if s.clock == nil {
		s.clock = clockwork.NewRealClock()
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.maxBatch <= 0 {
		s.maxBatch = 512
	}

	fail := func(err error) (*SQLiteStore, error) {
		s.closeStmts()
		for _, db := range []*sql.DB{s.rdb, s.wdb} {
			if db != nil {
				_ = db.Close()
			}
		}
		return nil, fmt.Errorf("outbox: open: %w", err)
	}
	var err error
	if s.wdb, err = sql.Open("sqlite", path+"?"+dsnPragmas+"&_txlock=immediate"); err != nil {
		return fail(err)
	}
	s.wdb.SetMaxOpenConns(1) // the one writer; also keeps the prepared statements on one connection
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	if _, err := s.wdb.Exec(schema); err != nil {
		return fail(fmt.Errorf("schema: %w", err))
	}
	if s.stmts, err = prepareWrites(s.wdb); err != nil {
		return fail(err)
	}
	if s.rdb, err = sql.Open("sqlite", path+"?"+dsnPragmas+"&_pragma=query_only(1)"); err != nil {
		return fail(err)
	}
	s.rdb.SetMaxOpenConns(4)
	s.rdb.SetMaxIdleConns(4)
	if s.get, err = s.rdb.Prepare(`SELECT ` + intentColumns + ` FROM intents WHERE id = ?`); err != nil {
		return fail(err)
	}
	if s.find, err = s.rdb.Prepare(`SELECT ` + intentColumns + ` FROM intents
		WHERE room = ? AND visitor = ? AND state != 'REJECTED' ORDER BY seq DESC LIMIT 1`); err != nil {
		return fail(err)
	}
	if s.pend, err = s.rdb.Prepare(`SELECT ` + intentColumns + ` FROM intents
		WHERE state = 'PENDING' ORDER BY seq LIMIT ?`); err != nil {
		return fail(err)
	}
	if err := s.loadCounts(); err != nil {
		return fail(err)
	}
	go s.writeLoop()
	return s, nil
}

func (s *SQLiteStore) loadCounts() error {
	rows, err := s.wdb.Query(`SELECT state, COUNT(*) FROM intents GROUP BY state`)
	if err != nil {
		return fmt.Errorf("count: %w", err)
	}
	defer rows.Close()
	var c Counts
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		c.add(stateStatus[state], n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("count: %w", err)
	}
	s.counts = c
	return nil
}

func (s *SQLiteStore) closeStmts() {
	if s.stmts != nil {
		s.stmts.close()
	}
	for _, st := range []*sql.Stmt{s.get, s.find, s.pend} {
		if st != nil {
			_ = st.Close()
		}
	}
}

// Path is the outbox file.
func (s *SQLiteStore) Path() string { return s.path }

// Close waits for the writes already taken to commit, then closes the file.
// Accept and the other writes return ErrClosed afterwards.
func (s *SQLiteStore) Close() error {
	var err error
	s.close.Do(func() {
		close(s.closing)
		<-s.stopped
		s.closeStmts()
		err = errors.Join(s.rdb.Close(), s.wdb.Close())
		if err != nil {
			err = fmt.Errorf("outbox: close: %w", err)
		}
	})
	return err
}

func (s *SQLiteStore) Accept(ctx context.Context, room, visitor string, payload json.RawMessage) (Intent, bool, error) {
	var err error
	switch {
	case room == "" || visitor == "":
		err = ErrInvalidIntent
	case len(payload) > MaxPayloadBytes:
		err = ErrPayloadTooLarge
	case !json.Valid(payload):
		// It goes into the Kafka message as raw JSON: invalid JSON there
		// would make the whole message unencodable.
		err = ErrInvalidPayload
	default:
		op := &writeOp{kind: opAccept, room: room, visitor: visitor, payload: payload}
		if err = s.do(ctx, op); err == nil {
			return op.intent, op.created, nil
		}
	}
	return Intent{}, false, fmt.Errorf("outbox: accept: %w", err)
}

func (s *SQLiteStore) MarkPublished(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.do(ctx, &writeOp{kind: opPublished, ids: ids}); err != nil {
		return fmt.Errorf("outbox: mark published: %w", err)
	}
	return nil
}

func (s *SQLiteStore) Finish(ctx context.Context, results []ResultMessage) (int, error) {
	if len(results) == 0 {
		return 0, nil
	}
	op := &writeOp{kind: opFinish, results: results}
	if err := s.do(ctx, op); err != nil {
		return 0, fmt.Errorf("outbox: finish: %w", err)
	}
	return op.changed, nil
}

// closed reports whether Close has begun.
func (s *SQLiteStore) closed() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

func (s *SQLiteStore) Counts(ctx context.Context) (Counts, error) {
	if s.closed() {
		return Counts{}, fmt.Errorf("outbox: counts: %w", ErrClosed)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts, nil
}

func (s *SQLiteStore) Get(ctx context.Context, id string) (Intent, error) {
	if s.closed() {
		return Intent{}, fmt.Errorf("outbox: get: %w", ErrClosed)
	}
	in, err := scanIntent(s.get.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Intent{}, fmt.Errorf("outbox: get: %w", err)
	}
	return s.keyed(in), nil
}

// Find returns the visitor's latest intent in room that checkout did not
// reject, or ErrNotFound.
func (s *SQLiteStore) Find(ctx context.Context, room, visitor string) (Intent, error) {
	if s.closed() {
		return Intent{}, fmt.Errorf("outbox: find: %w", ErrClosed)
	}
	// Every enter asks: with no intent standing here (the usual case, no
	// outage yet) the counts kept in memory answer without a query.
	s.mu.Lock()
	c := s.counts
	s.mu.Unlock()
	if c.Accepted+c.Published+c.Processed == 0 {
		return Intent{}, fmt.Errorf("outbox: find: %w", ErrNotFound)
	}
	in, err := scanIntent(s.find.QueryRowContext(ctx, room, visitor))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Intent{}, fmt.Errorf("outbox: find: %w", err)
	}
	return s.keyed(in), nil
}

func (s *SQLiteStore) Pending(ctx context.Context, limit int) ([]Intent, error) {
	if s.closed() {
		return nil, fmt.Errorf("outbox: pending: %w", ErrClosed)
	}
	rows, err := s.pend.QueryContext(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("outbox: pending: %w", err)
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return nil, fmt.Errorf("outbox: pending: %w", err)
		}
		out = append(out, s.keyed(in))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: pending: %w", err)
	}
	return out, nil
}

type scanner interface{ Scan(...any) error }

func scanIntent(r scanner) (Intent, error) {
	var (
		in                  Intent
		payload             []byte
		state               string
		accepted            int64
		published, finished sql.NullInt64
	)
	if err := r.Scan(&in.ID, &in.Room, &in.Visitor, &payload, &state, &in.Reason, &accepted, &published, &finished); err != nil {
		return Intent{}, err
	}
	in.Payload = json.RawMessage(payload)
	in.Status = stateStatus[state]
	in.AcceptedAt = fromNanos(accepted)
	if published.Valid {
		in.PublishedAt = fromNanos(published.Int64)
	}
	if finished.Valid {
		in.FinishedAt = fromNanos(finished.Int64)
	}
	return in, nil
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// keyed sets the intent's idempotency key.
func (s *SQLiteStore) keyed(in Intent) Intent {
	in.Key = IdempotencyKey(s.keySecret, in.Room, in.Visitor)
	return in
}
