package main

import "github.com/alicebob/miniredis/v2"

// startEmbeddedRedis runs miniredis on loopback, so the same Redis adapter
// and Lua scripts run without anything installed.
func startEmbeddedRedis() (*miniredis.Miniredis, error) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return mr, nil
}
