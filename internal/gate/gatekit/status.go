package gatekit

import (
	"bufio"
	"net"
	"net/http"
)

// statusWriter remembers the status of an answer and lets its owner act
// once, just before the headers go out (add a cookie, record latency).
type statusWriter struct {
	http.ResponseWriter
	code     int
	onHeader func(code int)
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
		if w.onHeader != nil {
			w.onHeader(code)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush and Hijack pass through for streams and upgrades; Unwrap serves
// http.ResponseController.
func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
