// Package e2e holds the end-to-end tests of the shopper's pages: a real
// server (the line on a real redis-server, the admission loop, the push
// hub, the demo shop) driven in headless Chromium by the scripts in
// web/e2e. They skip, naming what is missing, without Chromium, node or
// playwright-core.
//
// They are a package of their own, rather than server's, so that go test
// ./... starts them early: it starts packages in path order, and the
// longest tests of the suite, begun last, were its tail.
package e2e
