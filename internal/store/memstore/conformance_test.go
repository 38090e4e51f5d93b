package memstore_test

import (
	"testing"

	"github.com/waitroom/waitroom/internal/store/conformance"
	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/queue"
)

// TestConformance runs the line's behaviour against the memory store.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) func() queue.Store {
		s := memstore.New()
		return func() queue.Store { return s }
	})
}
