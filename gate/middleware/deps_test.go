package middleware_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A shop that imports the middleware compiles only what the middleware
// needs: not the web framework, templates or Redis client of waitroom.
func TestDepsStayLight(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/waitroom/waitroom/gate/middleware").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %v", len(deps), deps)
	}
	for _, d := range deps {
		for _, heavy := range []string{"github.com/labstack/echo", "github.com/a-h/templ", "github.com/redis/go-redis",
			"github.com/waitroom/waitroom/server", "github.com/waitroom/waitroom/templates"} {
			if d == heavy || strings.HasPrefix(d, heavy+"/") {
				if strings.HasPrefix(d, "github.com/waitroom/waitroom/gate/") {
					continue // the middleware itself and its internal kit
				}
				t.Errorf("the middleware drags in %s", d)
			}
		}
	}
}
