package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/vocab"
)

const root = "../../.."

// TestGeneratedCurrent fails when a generated table is not what package
// vocab makes of it now: run go generate ./internal/vocab and commit.
func TestGeneratedCurrent(t *testing.T) {
	for _, o := range outputs {
		got, err := os.ReadFile(filepath.Join(root, o.path))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(o.render()) {
			t.Errorf("%s is stale: run go generate ./internal/vocab and commit it", o.path)
		}
	}
}

// TestScriptsSpellNoWord fails when a Lua script spells out a state, end
// reason or admission mode instead of using vocab.lua's local.
func TestScriptsSpellNoWord(t *testing.T) {
	words := append(append(strs(vocab.States), vocab.Reasons...), strs(vocab.Admissions)...)
	files, _ := filepath.Glob(filepath.Join(root, "internal/store/redisstore/lua/*.lua"))
	if len(files) < 10 {
		t.Fatalf("found %d scripts", len(files))
	}
	for _, f := range files {
		if filepath.Base(f) == "vocab.lua" {
			continue
		}
		spelled(t, f, true, words)
	}
}

// TestPageSpellsNoWord fails when the page's TypeScript spells out a state,
// end reason or display state instead of using web/vocab.ts. Tests may: they
// check the wire as it is.
func TestPageSpellsNoWord(t *testing.T) {
	words := append(append(strs(vocab.States), vocab.Reasons...), strs(vocab.Displays)...)
	files, _ := filepath.Glob(filepath.Join(root, "web/*.ts"))
	if len(files) < 10 {
		t.Fatalf("found %d sources", len(files))
	}
	for _, f := range files {
		if filepath.Base(f) == "vocab.ts" || strings.HasSuffix(f, ".test.ts") {
			continue
		}
		spelled(t, f, false, words)
	}
}

func spelled(t *testing.T, file string, lua bool, words []string) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range literals(string(src), lua) {
		if slices.Contains(words, l.text) {
			t.Errorf("%s:%d: %q spelled out: use the generated vocab", filepath.Base(file), l.line, l.text)
		}
	}
}

// TestLiterals checks the scanner on what the sources hold: comments
// skipped, escapes and the exempt mark honoured.
func TestLiterals(t *testing.T) {
	lua := "-- 'waiting' in a comment\nlocal a = 'left' .. \"it\\\"s\"\nlocal b = 'full' -- " + exempt + "\n"
	got := literals(lua, true)
	want := []literal{{2, "left"}, {2, `it\"s`}}
	if !slices.Equal(got, want) {
		t.Errorf("lua: got %v, want %v", got, want)
	}
	ts := "/* \"closed\" */ const x = `a${b}`; // 'left'\nf('idle');\n"
	got = literals(ts, false)
	want = []literal{{1, "a${b}"}, {2, "idle"}}
	if !slices.Equal(got, want) {
		t.Errorf("ts: got %v, want %v", got, want)
	}
}

func strs[T ~string](ws []T) []string { return words(ws) }
