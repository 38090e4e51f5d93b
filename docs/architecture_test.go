package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestArchitectureListsEveryPackage: architecture.md's package table names
// every Go package of the module, and nothing that is gone.
func TestArchitectureListsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(doc), "| package | what it is |")
	end := strings.Index(string(doc), "## Ports")
	if start < 0 || end < start {
		t.Fatal("architecture.md: no package table before ## Ports")
	}
	listed := map[string]bool{}
	name := regexp.MustCompile("`([a-z][a-z0-9_/]*)`")
	for _, row := range strings.Split(string(doc[start:end]), "\n") {
		cells := strings.Split(row, "|") // "", first column, ...
		if len(cells) < 3 {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			listed[m[1]] = true
		}
	}
	have := packages(t, "..")
	for _, p := range have {
		if !listed[p] {
			t.Errorf("package %s is not in architecture.md's table", p)
		}
	}
	for p := range listed { // a package or a folder heading
		if fi, err := os.Stat(filepath.Join("..", p)); err != nil || !fi.IsDir() {
			t.Errorf("architecture.md names %s, which is not a folder of the module", p)
		}
	}
}

// packages are the module's directories holding Go code other than tests.
func packages(t *testing.T, root string) []string {
	t.Helper()
	set := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			set[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
