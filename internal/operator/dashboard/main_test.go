package dashboard_test

import (
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
