package redisstore

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestScriptArgsMatchHeaders: each argument type's fields are its script's
// KEYS and ARGV as the script's header comment names them, in order and by
// number (a variadic one as ARGV[n..] name), and the elements of an enter
// batch as EACH[j] name. Every script has its type.
func TestScriptArgsMatchHeaders(t *testing.T) {
	typed := map[*script]bool{}
	for _, a := range allArgs {
		sc := a.script()
		typed[sc] = true
		want := expectedHeader(reflect.TypeOf(a))
		got := headerNames(sc.body)
		for i, e := range got["ARGV"] {
			if num, name, _ := strings.Cut(e, " "); strings.Contains(num, "+") && strings.HasSuffix(num, "..") {
				got["ARGV"][i] = "* " + name // ARGV[13+size..]: after a variadic one
			}
		}
		for _, kind := range []string{"KEYS", "ARGV", "EACH"} {
			if !slices.Equal(got[kind], want[kind]) {
				t.Errorf("%s.lua %s: header %q, %T %q", sc.op, kind, got[kind], a, want[kind])
			}
		}
	}
	for _, sc := range scripts {
		if !typed[sc] {
			t.Errorf("%s.lua has no argument type", sc.op)
		}
	}
}

// expectedHeader is what a header names for argument type t.
func expectedHeader(t reflect.Type) map[string][]string {
	out := map[string][]string{}
	n := map[string]int{}
	variadic := false
	for _, f := range fieldsOf(t) {
		kind := "ARGV"
		if f.key {
			kind = "KEYS"
		}
		n[kind]++
		switch {
		case f.rest && variadic:
			// A second variadic entry starts where the first ends: the
			// header says how.
			out[kind] = append(out[kind], "* "+f.name)
		case f.rest:
			variadic = true
			out[kind] = append(out[kind], fmt.Sprintf("%d.. %s", n[kind], f.name))
		default:
			out[kind] = append(out[kind], fmt.Sprintf("%d %s", n[kind], f.name))
		}
		for j, e := range f.each {
			out["EACH"] = append(out["EACH"], fmt.Sprintf("%d %s", j+1, e.name))
		}
	}
	return out
}

// TestHeaderNames reads entries, not mentions.
func TestHeaderNames(t *testing.T) {
	got := headerNames("-- KEYS[1] q  KEYS[2] base: x (KEYS[3])\n-- ARGV[1] now (ms)  ARGV[2..] members\n-- EACH[1] id\nlocal x = ARGV[3] -- ARGV[3] later\n")
	want := map[string][]string{"KEYS": {"1 q", "2 base"}, "ARGV": {"1 now", "2.. members"}, "EACH": {"1 id"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestMarshal: keys and arguments by field order, a batch as its count and
// then each element, the rest of ARGV from a slice, a bool as 1 or 0.
func TestMarshal(t *testing.T) {
	keys, argv := marshal(enterArgs{Base: "b", Enters: []enterOne{{Identity: "a", Now: 7}, {Identity: "c"}}})
	if !slices.Equal(keys, []string{"b"}) || len(argv) != 1+2*20 || argv[0] != 2 || argv[1] != "a" || argv[3] != int64(7) || argv[21] != "c" {
		t.Errorf("enter: keys %v, argv %v", keys, argv)
	}
	keys, argv = marshal(tickArgs{Q: "q", Present: "p", Paused: true, Jitters: []int64{5, 6}, Draws: []string{"9"}})
	if len(keys) != 12 || keys[0] != "q" || keys[11] != "p" || len(argv) != 16 || argv[5] != 1 || argv[13] != int64(5) || argv[15] != "9" {
		t.Errorf("tick: keys %v, argv %v", keys, argv)
	}
	if _, argv = marshal(tickArgs{}); argv[5] != 0 || len(argv) != 13 {
		t.Errorf("tick, not paused: argv %v", argv)
	}
}

// TestCodesDeclared: the scripts see every code by its name.
func TestCodesDeclared(t *testing.T) {
	for _, c := range codes {
		if !strings.Contains(codesLua, fmt.Sprintf("local %s = %d\n", c.lua, c.c)) {
			t.Errorf("%s not declared", c.lua)
		}
	}
	for _, sc := range scripts {
		for _, c := range codes {
			if strings.Contains(sc.body, c.lua) && !strings.Contains(library().code, "local "+c.lua) {
				t.Errorf("%s uses %s, which the library lacks", sc.op, c.lua)
			}
		}
	}
}

// allArgs is one value of every argument type, for the tests.
var allArgs = []scriptArgs{activeArgs{}, aliveArgs{}, arriveArgs{}, completeArgs{}, drawArgs{},
	enterArgs{}, handoffArgs{}, heldArgs{}, holdArgs{}, leaseArgs{}, leaveArgs{}, placesArgs{},
	presentArgs{}, renewArgs{}, restoreArgs{}, retireArgs{}, statusArgs{}, tickArgs{}}

// headerNames are the entries a script's header comment names, by kind
// (KEYS, ARGV, EACH), in order, with their numbers ("" for a variadic
// one's, which follows what came before).
func headerNames(body string) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "--") {
			break
		}
		for _, kind := range []string{"KEYS", "ARGV", "EACH"} {
			rest := line
			for {
				i := strings.Index(rest, kind+"[")
				if i < 0 {
					break
				}
				rest = rest[i+len(kind)+1:]
				end := strings.IndexByte(rest, ']')
				if end < 0 {
					break
				}
				num := rest[:end]
				rest = rest[end+1:]
				if !strings.HasPrefix(rest, " ") {
					continue // a mention, not an entry
				}
				name := strings.TrimLeft(rest, " ")
				if n := strings.IndexFunc(name, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }); n >= 0 {
					name = name[:n]
				}
				if name != "" {
					out[kind] = append(out[kind], num+" "+name)
				}
			}
		}
	}
	return out
}
