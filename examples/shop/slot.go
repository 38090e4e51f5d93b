package shop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// freeSlot tells waitroom that checkout is done with this token, so the next
// shopper gets the slot now rather than when the token expires.
func (s *Shop) freeSlot(ctx context.Context, tok string) error {
	body, _ := json.Marshal(map[string]string{"token": tok})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		s.cfg.WaitroomURL+"/api/rooms/"+s.cfg.Room+"/complete", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("shop: free slot: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := s.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("shop: free slot: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK {
		return nil
	}
	// A repeated "Place order" finds the slot handed back already.
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&e) == nil && e.Error.Code == "token_completed" {
		return nil
	}
	return fmt.Errorf("shop: free slot: waitroom answered %s %s", res.Status, e.Error.Code)
}
