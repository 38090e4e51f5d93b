package main

import (
	"context"
	"log/slog"

	"github.com/waitroom/waitroom/internal/store/redisstore"
)

// retireOldRecords is the startup check of the record encodings from before
// the buckets (redisstore/records.go): it moves each room's compact records
// into the buckets once, and says what is left to end by itself. A Redis
// that is down skips it: the next start runs it again.
func retireOldRecords(ctx context.Context, store *redisstore.Store, log *slog.Logger) {
	old, err := store.OldRecords(ctx)
	if err != nil {
		log.Warn("old records: not checked", "err", err)
		return
	}
	for room := range old {
		r, err := store.RetireOldRecords(ctx, room)
		if err != nil {
			log.Warn("old records: not retired", "room", room, "err", err)
			continue
		}
		log.Info("old records retired", "room", room, "moved", r.Moved, "left", r.Left)
	}
}
