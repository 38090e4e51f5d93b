// Package roomsnap keeps a server's copy of the rooms (settings and Redis's
// data epoch) in a SQLite file under the data directory. It is written only
// when something changed, so the admission loop's refresh every tick costs
// a map lookup.
package roomsnap

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/waitroom/waitroom/queue"
)

// FileName is the snapshot's file inside the data directory.
const FileName = "rooms.db"

const schema = `
CREATE TABLE IF NOT EXISTS rooms (
	id       TEXT PRIMARY KEY,
	settings BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
	k TEXT PRIMARY KEY,
	v TEXT NOT NULL
);
`

// Store is a RoomSnapshot in SQLite.
type Store struct {
	db *sql.DB

	mu    sync.Mutex
	saved map[string][]byte // what the file holds, to skip unchanged writes
	epoch string
}

var _ queue.RoomSnapshot = (*Store)(nil)

// Open opens (creating when absent) the snapshot at path, e.g.
// filepath.Join(dataDir, FileName).
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("roomsnap: open: %w", err)
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, fmt.Errorf("roomsnap: open: %w", err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("roomsnap: open: schema: %w", err)
	}
	return &Store{db: db, saved: map[string][]byte{}}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) Load(ctx context.Context) (map[string]queue.Settings, string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, settings FROM rooms`)
	if err != nil {
		return nil, "", fmt.Errorf("roomsnap: load: %w", err)
	}
	defer rows.Close()
	rooms := map[string]queue.Settings{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			return nil, "", fmt.Errorf("roomsnap: load: %w", err)
		}
		// Parsed as the admin API parses: a file edited by hand or by an
		// older version cannot smuggle in settings the API would refuse.
		st, err := queue.ParseSettings(data)
		if err != nil || !queue.ValidRoomID(id) {
			continue
		}
		rooms[id] = st
		s.saved[id] = data
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("roomsnap: load: %w", err)
	}
	err = s.db.QueryRowContext(ctx, `SELECT v FROM meta WHERE k = 'epoch'`).Scan(&s.epoch)
	if err != nil && err != sql.ErrNoRows {
		return nil, "", fmt.Errorf("roomsnap: load epoch: %w", err)
	}
	return rooms, s.epoch, nil
}

func (s *Store) SaveRoom(ctx context.Context, room string, st queue.Settings) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("roomsnap: save room: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.saved[room]; ok && bytes.Equal(old, data) {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO rooms (id, settings) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET settings = excluded.settings`, room, data); err != nil {
		return fmt.Errorf("roomsnap: save room: %w", err)
	}
	s.saved[room] = data
	return nil
}

func (s *Store) DeleteRoom(ctx context.Context, room string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.saved[room]; !ok {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM rooms WHERE id = ?`, room); err != nil {
		return fmt.Errorf("roomsnap: delete room: %w", err)
	}
	delete(s.saved, room)
	return nil
}

func (s *Store) SaveEpoch(ctx context.Context, epoch string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch == s.epoch {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO meta (k, v) VALUES ('epoch', ?)
		ON CONFLICT (k) DO UPDATE SET v = excluded.v`, epoch); err != nil {
		return fmt.Errorf("roomsnap: save epoch: %w", err)
	}
	s.epoch = epoch
	return nil
}
