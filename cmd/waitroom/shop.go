package main

import "github.com/waitroom/waitroom/server"

// mountShop adds the demo checkout at /shop.
func mountShop(srv *server.Server, cfg config) {}
