// Command testtimes reads `go test -json` on stdin and prints each package's
// wall time, slowest first, then the slowest top-level tests: the per-package
// record docs/testing.md keeps.
//
//	go test -short -count=1 -json ./... | go run ./scripts/testtimes
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

type timed struct {
	name    string
	action  string
	elapsed float64
}

func main() {
	var pkgs, tests []timed
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Action != "pass" && e.Action != "fail" && e.Action != "skip" {
			continue
		}
		name := strings.TrimPrefix(e.Package, "github.com/waitroom/waitroom/")
		switch {
		case e.Test == "":
			pkgs = append(pkgs, timed{name, e.Action, e.Elapsed})
		case !strings.Contains(e.Test, "/") && e.Action != "skip":
			tests = append(tests, timed{name + " " + e.Test, e.Action, e.Elapsed})
		}
	}
	failed := 0
	for _, p := range pkgs {
		if p.action == "fail" {
			failed++
		}
	}
	for _, list := range [][]timed{pkgs, tests} {
		sort.Slice(list, func(i, j int) bool { return list[i].elapsed > list[j].elapsed })
	}
	fmt.Println("| package | s | result |\n| --- | ---: | --- |")
	for _, p := range pkgs {
		if p.elapsed > 0 || p.action == "fail" {
			fmt.Printf("| `%s` | %.1f | %s |\n", p.name, p.elapsed, p.action)
		}
	}
	fmt.Println("\nslowest tests:")
	for _, t := range tests[:min(len(tests), 10)] {
		fmt.Printf("  %6.1f s  %s (%s)\n", t.elapsed, t.name, t.action)
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "testtimes: %d packages failed\n", failed)
		os.Exit(1)
	}
}
