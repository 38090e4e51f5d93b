package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

type opKind int

const (
	opAccept opKind = iota
	opPublished
	opFinish
	opProbe
)

// writeOp is one caller's write, waiting for the writer goroutine. The
// writer fills the results and then closes done.
type writeOp struct {
	ctx  context.Context
	kind opKind

	room, visitor string          // opAccept
	payload       []byte          // opAccept
	ids           []string        // opPublished
	results       []ResultMessage // opFinish

	intent  Intent // opAccept
	created bool   // opAccept
	changed int    // opFinish
	delta   Counts // applied to the counts after COMMIT
	err     error
	done    chan struct{}
}

// do hands op to the writer and waits for its COMMIT.
func (s *SQLiteStore) do(ctx context.Context, op *writeOp) error {
	op.ctx = ctx
	op.done = make(chan struct{})
	select {
	case s.ops <- op:
	case <-s.closing:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-op.done:
		return op.err
	case <-ctx.Done():
		// The write may still commit; the caller only stops waiting.
		return ctx.Err()
	}
}

// writeLoop is the only writer. It takes one op, then every op already
// waiting (up to maxBatch), and commits them in one transaction: while one
// COMMIT waits for its fsync, the next group gathers.
func (s *SQLiteStore) writeLoop() {
	defer close(s.stopped)
	batch := make([]*writeOp, 0, s.maxBatch)
	for {
		select {
		case op := <-s.ops:
			batch = append(batch, op)
		case <-s.closing:
			// Callers blocked in do pick closing once nobody receives.
			return
		}
	gather:
		for len(batch) < s.maxBatch {
			select {
			case op := <-s.ops:
				batch = append(batch, op)
			default:
				break gather
			}
		}
		s.commit(batch)
		clear(batch)
		batch = batch[:0]
	}
}

func (s *SQLiteStore) commit(batch []*writeOp) {
	live := batch[:0:0]
	for _, op := range batch {
		if err := op.ctx.Err(); err != nil {
			op.err = err
			close(op.done)
			continue
		}
		live = append(live, op)
	}
	if len(live) == 0 {
		return
	}
	err := s.apply(live)
	if err != nil && len(live) > 1 {
		// One op may be the cause: give each its own transaction so the
		// others still land.
		s.log.Warn("outbox: grouped write failed, writing one by one", "ops", len(live), "err", err)
		for _, op := range live {
			s.settle([]*writeOp{op}, s.apply([]*writeOp{op}))
		}
		return
	}
	s.settle(live, err)
}

// settle answers the callers of one transaction and counts what it committed.
func (s *SQLiteStore) settle(ops []*writeOp, err error) {
	if err != nil {
		s.health.failed(s.log, s.clock.Now(), len(ops), err)
		err = fmt.Errorf("%w: %w", ErrWriteFailed, err)
	} else {
		s.health.wrote(s.log, s.clock.Now())
		s.mu.Lock()
		for _, op := range ops {
			s.counts.plus(op.delta)
		}
		s.mu.Unlock()
	}
	for _, op := range ops {
		op.err = err
		close(op.done)
	}
}

// apply runs the ops in one transaction. Any failure rolls back all of
// them: they share one COMMIT, so they share its outcome.
func (s *SQLiteStore) apply(ops []*writeOp) (err error) {
	// Not the callers' contexts: one caller giving up must not roll back the others.
	ctx := context.Background()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	now := s.clock.Now().UTC().UnixNano()
	for _, op := range ops {
		op.delta = Counts{}
		switch op.kind {
		case opAccept:
			err = s.applyAccept(ctx, tx, op, now)
		case opPublished:
			err = s.applyPublished(ctx, tx, op, now)
		case opFinish:
			err = s.applyFinish(ctx, tx, op, now)
		case opProbe:
			_, err = tx.ExecContext(ctx, `INSERT INTO probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`, now)
		}
		if err != nil {
			return err
		}
	}
	if err = tx.Commit(); err != nil {
		// A failed COMMIT can leave SQLite's transaction open on the one
		// connection, and every later BEGIN would fail: end it.
		_, _ = s.wdb.ExecContext(ctx, `ROLLBACK`)
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// writeStmts are prepared once on the writer's connection: compiling SQL
// costs more than running it, and every write runs these.
type writeStmts struct {
	insert, findHeld, markPublished, states, finish *sql.Stmt
}

func prepareWrites(db *sql.DB) (*writeStmts, error) {
	var ws writeStmts
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		// The conflict target is the partial index: an open intent of
		// the same visitor and room makes this a no-op.
		{&ws.insert, `INSERT INTO intents (id, room, visitor, payload, state, accepted_at)
			VALUES (?, ?, ?, ?, 'PENDING', ?)
			ON CONFLICT (room, visitor) WHERE state IN ('PENDING', 'PUBLISHED') DO NOTHING`},
		// The visitor's one order: open or processed; a rejected one frees them.
		{&ws.findHeld, `SELECT ` + intentColumns + ` FROM intents
			WHERE room = ? AND visitor = ? AND state != 'REJECTED' ORDER BY seq DESC LIMIT 1`},
		{&ws.markPublished, `UPDATE intents SET state = 'PUBLISHED', published_at = ?
			WHERE state = 'PENDING' AND id IN (SELECT value FROM json_each(?))`},
		{&ws.states, `SELECT id, state FROM intents WHERE id IN (SELECT value FROM json_each(?))`},
		{&ws.finish, `UPDATE intents SET state = ?, reason = ?, finished_at = ? WHERE id = ?`},
	} {
		st, err := db.Prepare(p.sql)
		if err != nil {
			ws.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*p.stmt = st
	}
	return &ws, nil
}

func (ws *writeStmts) close() {
	for _, st := range []*sql.Stmt{ws.insert, ws.findHeld, ws.markPublished, ws.states, ws.finish} {
		if st != nil {
			_ = st.Close()
		}
	}
}

func (s *SQLiteStore) applyAccept(ctx context.Context, tx *sql.Tx, op *writeOp, now int64) error {
	// One writer: nothing can come between this look and the insert.
	held, err := scanIntent(tx.StmtContext(ctx, s.stmts.findHeld).QueryRowContext(ctx, op.room, op.visitor))
	switch {
	case err == nil:
		op.intent, op.created = s.keyed(held), false
		return nil
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("find held: %w", err)
	}
	id, err := uuid.NewV7() // time-ordered: new ids append to the index
	if err != nil {
		return fmt.Errorf("new id: %w", err)
	}
	in := Intent{
		ID:         id.String(),
		Room:       op.room,
		Visitor:    op.visitor,
		Payload:    op.payload,
		Status:     StatusAccepted,
		AcceptedAt: fromNanos(now),
	}
	res, err := tx.StmtContext(ctx, s.stmts.insert).ExecContext(ctx, in.ID, in.Room, in.Visitor, []byte(in.Payload), now)
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("insert: %w", err)
	} else if n != 1 {
		return fmt.Errorf("insert: %d rows", n) // the look above found none open
	}
	op.intent, op.created = s.keyed(in), true
	op.delta.Accepted = 1
	return nil
}

func (s *SQLiteStore) applyPublished(ctx context.Context, tx *sql.Tx, op *writeOp, now int64) error {
	ids, err := json.Marshal(op.ids)
	if err != nil {
		return fmt.Errorf("mark published: %w", err)
	}
	res, err := tx.StmtContext(ctx, s.stmts.markPublished).ExecContext(ctx, now, string(ids))
	if err != nil {
		return fmt.Errorf("mark published: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("mark published: %w", err)
	}
	op.delta.Accepted -= n
	op.delta.Published += n
	return nil
}

func (s *SQLiteStore) applyFinish(ctx context.Context, tx *sql.Tx, op *writeOp, now int64) error {
	ids := make([]string, len(op.results))
	for i, r := range op.results {
		ids[i] = r.IntentID
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	rows, err := tx.StmtContext(ctx, s.stmts.states).QueryContext(ctx, string(list))
	if err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	states := make(map[string]string, len(ids))
	for rows.Next() {
		var id, state string
		if err := rows.Scan(&id, &state); err != nil {
			rows.Close()
			return fmt.Errorf("finish: %w", err)
		}
		states[id] = state
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("finish: %w", err)
	}

	finish := tx.StmtContext(ctx, s.stmts.finish)
	for _, r := range op.results {
		var state string
		switch r.Status {
		case ResultProcessed:
			state = stateProcessed
		case ResultRejected:
			state = stateRejected
		default:
			continue
		}
		// Unknown and final intents are left alone. PENDING may finish: a
		// result can overtake the relay's own mark.
		was, ok := states[r.IntentID]
		if !ok || !stateStatus[was].Open() {
			continue
		}
		reason := r.Reason
		if state == stateProcessed {
			reason = ""
		}
		if _, err := finish.ExecContext(ctx, state, reason, now, r.IntentID); err != nil {
			return fmt.Errorf("finish: %w", err)
		}
		states[r.IntentID] = state // a later result in this batch sees it final
		op.changed++
		op.delta.add(stateStatus[was], -1)
		op.delta.add(stateStatus[state], 1)
	}
	return nil
}
