package redisstore

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/queue"
)

// TestLogKeepIsTheScriptsCap: record.lua writes the log's cap as a literal,
// and every script that changes q logs through it.
func TestLogKeepIsTheScriptsCap(t *testing.T) {
	want := fmt.Sprintf("math.min(%d, math.max(%d, waiting or redis.call('ZCARD', q)))", queue.LogKeep, queue.LogKeepMin)
	src, err := os.ReadFile("lua/record.lua")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), want) {
		t.Errorf("record.lua: no %s", want)
	}
	for _, name := range []string{"enter.lua", "tick.lua", "leave.lua", "draw.lua"} {
		src, err := os.ReadFile("lua/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "log_changes(") {
			t.Errorf("%s: does not log its changes to q", name)
		}
	}
}

// TestSweepKeepIsTheScripts: tick.lua writes queue.SweepKeep as a literal.
func TestSweepKeepIsTheScripts(t *testing.T) {
	src, err := os.ReadFile("lua/tick.lua")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("while examined - dropped < %d and", queue.SweepKeep)
	if !strings.Contains(string(src), want) || !strings.Contains(string(src), fmt.Sprintf("examined - dropped >= %d then break", queue.SweepKeep)) {
		t.Errorf("tick.lua: no %s", want)
	}
}

func TestParseScores(t *testing.T) {
	got, err := parseScores("3,-2:1,1e+15,7.5")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[3 -2 -1 0 1 1e+15 7.5]" {
		t.Fatalf("got %v", got)
	}
	for _, bad := range []string{"x", "1,", "5:2", "1:99999999999", "1:y"} {
		if _, err := parseScores(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if got, err := parseScores(""); err != nil || got != nil {
		t.Fatalf("empty: %v %v", got, err)
	}
}
