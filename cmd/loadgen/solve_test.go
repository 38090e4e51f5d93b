package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// The solver against the real server: every place it takes was paid for,
// and the line holds exactly the places it reports.
func TestSolveTakesPaidPlaces(t *testing.T) {
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys, queue.LineOptions{})
	srv := httptest.NewServer(server.New(line, server.Config{AdminToken: "test-admin-token-0123456789"}))
	t.Cleanup(srv.Close)
	var out, errOut bytes.Buffer
	err = run(context.Background(), []string{"--url", srv.URL, "--admin-token", "test-admin-token-0123456789",
		"--solve", "--solve-cores", "2", "--concurrency", "2", "--requests", "6", "--warmup", "0", "--duration", "30s", "--json",
		"--settings", `{"capacity":1,"batch_interval_ms":60000,"abandon_after_s":3600,"bot_protection":{"pow_cost":20}}`}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	ch, sv, en := res.Ops["challenge"], res.Ops["solve"], res.Ops["enter"]
	// One address: from its fifth place on the price rises, so a solution
	// priced before another worker's place is refused with a dearer
	// challenge, which the solver solves too.
	if ch.Requests != 6 || ch.OK != 0 || ch.Errors["403"] != 6 || sv.OK < 6 || en.OK != 6 {
		t.Fatalf("challenge %+v, solve %+v, enter %+v: want 6 refusals, 6 or more solutions, 6 places", ch, sv, en)
	}
	// Five wait behind the one the empty line admitted at once.
	if res.Waiting == nil || *res.Waiting != 5 {
		t.Fatalf("waiting after %v, want 5", res.Waiting)
	}
}
