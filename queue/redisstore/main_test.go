package redisstore_test

import (
	"testing"

	"github.com/waitroom/waitroom/queue/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
