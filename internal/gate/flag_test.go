package gate_test

import (
	"flag"
	"io"
	"slices"
	"testing"

	"github.com/waitroom/waitroom/internal/gate"
)

func TestPathList(t *testing.T) {
	parse := func(env string, args ...string) ([]string, error) {
		var l gate.PathList
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(&l, "protect", "")
		if env != "" {
			if err := l.Set(env); err != nil {
				return nil, err
			}
		}
		l.Seal()
		err := fs.Parse(args)
		return l.Paths(), err
	}
	cases := []struct {
		env  string
		args []string
		want []string
	}{
		{"/checkout/*, /api/orders", nil, []string{"/checkout/*", "/api/orders"}},
		{"/env/*", []string{"--protect", "/a/*,/b", "--protect=/c"}, []string{"/a/*", "/b", "/c"}}, // flags win
		{"", []string{"--protect", " , "}, nil},
	}
	for _, c := range cases {
		got, err := parse(c.env, c.args...)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("env %q, args %q: %q %v, want %q", c.env, c.args, got, err, c.want)
		}
	}
	if _, err := parse("", "--protect", "checkout/*"); err == nil {
		t.Error("a pattern without a leading / must fail")
	}
}
