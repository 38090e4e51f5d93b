// Command gen writes the vocabulary's tables for the Lua scripts and the
// page's TypeScript from package vocab: go generate ./internal/vocab.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// Outputs are the generated files, relative to the module's root.
var outputs = []struct {
	path   string
	render func() []byte
}{
	{"internal/store/redisstore/lua/vocab.lua", luaTable},
	{"web/vocab.ts", tsTable},
}

func main() {
	root := flag.String("root", "../..", "the module's root")
	flag.Parse()
	for _, o := range outputs {
		if err := os.WriteFile(filepath.Join(*root, o.path), o.render(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "vocab gen:", err)
			os.Exit(1)
		}
	}
}
