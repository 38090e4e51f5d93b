// Package docs holds the API's description, embedded so that every server
// serves the one it was built with.
package docs

import _ "embed"

// OpenAPI is docs/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
