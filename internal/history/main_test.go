package history_test

import (
	"testing"

	"github.com/waitroom/waitroom/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
