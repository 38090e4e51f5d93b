// Package static serves the built page assets (npm run build writes them to
// dist/, which is committed) under content-hash URLs, so browsers can cache
// them forever and a new build is fetched at once.
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed dist
var dist embed.FS

// Prefix is where Handler expects to be mounted.
const Prefix = "/static/"

type asset struct {
	body        []byte
	contentType string
	etag        string
}

var (
	hashed = map[string]string{} // "waiting.js" -> "waiting.1a2b3c4d.js"
	assets = map[string]asset{}  // "waiting.1a2b3c4d.js" -> content
)

func init() {
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "dist/")
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])[:8]
		hashed[name] = hashedName(name, hash)
		assets[hashed[name]] = asset{body: body, contentType: contentType(name), etag: `"` + hash + `"`}
		return nil
	})
	if err != nil {
		panic("static: reading embedded assets: " + err.Error())
	}
}

// hashedName puts the hash before the extension: waiting.js -> waiting.<hash>.js.
func hashedName(name, hash string) string {
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hash + ext
}

// contentType is fixed for the types we build rather than left to the host's
// mime.types, which may lack them or differ between machines.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".map", ".json":
		return "application/json"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Path returns the URL of a built file, e.g. Path("waiting.js") ==
// "/static/waiting.1a2b3c4d.js". An unknown name gets an unhashed URL that
// Handler answers with 404, so a typo shows as a broken link, not a crash.
func Path(name string) string {
	if h, ok := hashed[name]; ok {
		return Prefix + h
	}
	return Prefix + name
}

// Handler serves the files at their hashed URLs with a year-long immutable
// cache. An unknown name or an old hash is 404: caching a stale file under
// a new page would be worse than a miss. It accepts paths with or without
// the /static/ prefix, so it works mounted directly or behind StripPrefix.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, Prefix), "/")
		a, ok := assets[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("ETag", a.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		// ServeContent answers HEAD, Range and If-None-Match for us.
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}
