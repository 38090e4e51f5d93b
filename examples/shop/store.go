package shop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// Where an order came from. Each source has its own idempotency keys: an
// intent_id and an entry token's jti are different requests even if equal.
const (
	SourceCheckout = "checkout"
	SourceKafka    = "kafka"
)

// What became of an order. Both are recorded, so a replay gets the same answer.
const (
	StatusPlaced  = "placed"
	StatusSoldOut = "sold_out"
)

// MaxQuantity is the most one order may buy: a drop is shared out, not bulk sold.
const MaxQuantity = 5

// ErrInvalidOrder is an order that can never be placed (unknown product,
// quantity outside 1..MaxQuantity). It is not recorded: the same request
// always gets the same refusal anyway.
var ErrInvalidOrder = errors.New("invalid order")

// Product is what the drop sells and how many are left.
type Product struct {
	ID    string
	Name  string
	Price string
	Stock int
}

// Outcome is the recorded answer to one idempotency key.
type Outcome struct {
	Key      string
	Product  string
	Quantity int
	Source   string
	Status   string // StatusPlaced or StatusSoldOut
	Replayed bool   // the key was already known: this is its earlier answer
}

// Store is the shop's stock and orders in one SQLite file. Every order goes
// through PlaceOrder, so the checkout and the Kafka consumer share one count.
type Store struct {
	db *sql.DB
}

const schema = `
CREATE TABLE IF NOT EXISTS products (
	id    TEXT PRIMARY KEY,
	name  TEXT NOT NULL,
	price TEXT NOT NULL,
	stock INTEGER NOT NULL CHECK (stock >= 0)
);
CREATE TABLE IF NOT EXISTS orders (
	source     TEXT NOT NULL CHECK (source IN ('checkout', 'kafka')),
	key        TEXT NOT NULL,
	product    TEXT NOT NULL REFERENCES products (id),
	quantity   INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 5),
	status     TEXT NOT NULL CHECK (status IN ('placed', 'sold_out')),
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	PRIMARY KEY (source, key)
) WITHOUT ROWID;
`

// OpenStore opens (or creates) the store at path, "" for one in memory that
// ends with Close. seed is inserted only if its product is not there yet: a
// restarted shop keeps the stock it had, not the configured start.
func OpenStore(ctx context.Context, path string, seed Product) (*Store, error) {
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(ON)")
	dsn := "file::memory:?" + q.Encode()
	if path != "" {
		// Immediate transactions take the write lock at BEGIN, so two orders
		// never both read the same stock; FULL syncs each commit to disk.
		q.Set("_txlock", "immediate")
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		dsn = "file:" + filepath.ToSlash(path) + "?" + q.Encode()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("shop: open store: %w", err)
	}
	if path == "" {
		// Every connection to :memory: is a database of its own: keep one.
		db.SetMaxOpenConns(1)
	} else {
		// Writers queue on SQLite's lock anyway; a few connections let the
		// checkout page read the stock while an order commits.
		db.SetMaxOpenConns(4)
	}
	s := &Store{db: db}
	if err := s.init(ctx, seed); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init(ctx context.Context, seed Product) error {
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("shop: create schema: %w", err)
	}
	if seed.Stock < 0 {
		return fmt.Errorf("shop: seed %s: negative stock %d", seed.ID, seed.Stock)
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO products (id, name, price, stock) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		seed.ID, seed.Name, seed.Price, seed.Stock)
	if err != nil {
		return fmt.Errorf("shop: seed %s: %w", seed.ID, err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("shop: close store: %w", err)
	}
	return nil
}

// Product returns a product with its stock now.
func (s *Store) Product(ctx context.Context, id string) (Product, error) {
	p := Product{ID: id}
	err := s.db.QueryRowContext(ctx, `SELECT name, price, stock FROM products WHERE id = ?`, id).
		Scan(&p.Name, &p.Price, &p.Stock)
	if errors.Is(err, sql.ErrNoRows) {
		return Product{}, fmt.Errorf("shop: product %q: %w: no such product", id, ErrInvalidOrder)
	}
	if err != nil {
		return Product{}, fmt.Errorf("shop: product %q: %w", id, err)
	}
	return p, nil
}

// Sold is how many of a product placed orders took.
func (s *Store) Sold(ctx context.Context, product string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx,
		`SELECT coalesce(sum(quantity), 0) FROM orders WHERE product = ? AND status = 'placed'`, product).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("shop: count sold %q: %w", product, err)
	}
	return n, nil
}

// PlaceOrder sells qty of product under an idempotency key, atomically: a
// known key gets its recorded outcome back; otherwise the stock is taken, or
// the order is recorded as sold out when too little is left.
func (s *Store) PlaceOrder(ctx context.Context, key, product string, qty int, source string) (Outcome, error) {
	switch {
	case key == "":
		return Outcome{}, fmt.Errorf("shop: place order: %w: empty key", ErrInvalidOrder)
	case source != SourceCheckout && source != SourceKafka:
		return Outcome{}, fmt.Errorf("shop: place order: %w: source %q", ErrInvalidOrder, source)
	case qty < 1 || qty > MaxQuantity:
		return Outcome{}, fmt.Errorf("shop: place order: %w: quantity %d is not 1..%d", ErrInvalidOrder, qty, MaxQuantity)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Outcome{}, fmt.Errorf("shop: place order: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	out := Outcome{Key: key, Source: source}
	err = tx.QueryRowContext(ctx, `SELECT product, quantity, status FROM orders WHERE source = ? AND key = ?`, source, key).
		Scan(&out.Product, &out.Quantity, &out.Status)
	if err == nil {
		out.Replayed = true
		return out, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Outcome{}, fmt.Errorf("shop: place order: look up key: %w", err)
	}

	var stock int
	err = tx.QueryRowContext(ctx, `SELECT stock FROM products WHERE id = ?`, product).Scan(&stock)
	if errors.Is(err, sql.ErrNoRows) {
		return Outcome{}, fmt.Errorf("shop: place order: %w: no such product %q", ErrInvalidOrder, product)
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("shop: place order: read stock: %w", err)
	}
	out.Product, out.Quantity, out.Status = product, qty, StatusSoldOut
	if stock >= qty {
		out.Status = StatusPlaced
		if _, err := tx.ExecContext(ctx, `UPDATE products SET stock = stock - ? WHERE id = ?`, qty, product); err != nil {
			return Outcome{}, fmt.Errorf("shop: place order: take stock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO orders (source, key, product, quantity, status) VALUES (?, ?, ?, ?, ?)`,
		source, key, product, qty, out.Status); err != nil {
		return Outcome{}, fmt.Errorf("shop: place order: record: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Outcome{}, fmt.Errorf("shop: place order: commit: %w", err)
	}
	return out, nil
}
