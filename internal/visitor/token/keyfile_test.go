package token

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadOrCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "keys", "entry.pem")

	first, created, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatal("created = false for a missing file")
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Fatalf("key file mode %o, want 600", mode)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("key dir holds %d entries, want only the key file (temp file left behind?)", len(entries))
	}

	second, created, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if created {
		t.Fatal("created = true for an existing file")
	}
	if second.KID() != first.KID() {
		t.Fatalf("second load has kid %s, want %s", second.KID(), first.KID())
	}
	tok := mustSign(t, first, validClaims())
	if _, err := second.Verify(tok, t0); err != nil {
		t.Fatalf("loaded key refuses a token of the created one: %v", err)
	}
}

func TestLoadOrCreateLeavesBadFileAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "entry.pem")
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreate(path); err == nil {
		t.Fatal("accepted a file with no key")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "not a key" {
		t.Fatal("bad key file was overwritten")
	}
}

func TestCreateOnceDoesNotReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "entry.pem")
	if won, err := createOnce(path, []byte("first")); err != nil || !won {
		t.Fatalf("first create: won=%v err=%v", won, err)
	}
	if won, err := createOnce(path, []byte("second")); err != nil || won {
		t.Fatalf("second create: won=%v err=%v, want lost", won, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "first" {
		t.Fatalf("file holds %q, want the first writer's", data)
	}
}
