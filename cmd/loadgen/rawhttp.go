package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// rawConn is one worker's keep-alive HTTP/1.1 connection. It writes request
// bytes built once and reads just what it needs of the reply, because the
// load generator shares two cores with the server it measures: net/http's
// client spends about 50µs of CPU a request on goroutine hand-offs, pools
// and headers, a fair share of what the server itself spends.
type rawConn struct {
	addr   string
	dialer *net.Dialer
	c      net.Conn
	br     *bufio.Reader
}

var errBadReply = errors.New("malformed HTTP reply")

// rawRequest builds the bytes of a body-less request.
func rawRequest(method, host, path, cookie string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, host)
	if cookie != "" {
		fmt.Fprintf(&b, "Cookie: wr_vid=%s\r\n", cookie)
	}
	if method == "POST" || method == "PUT" {
		b.WriteString("Content-Length: 0\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// rawReply is what the load generator reads of a reply.
type rawReply struct {
	status int
	body   []byte // only when asked for
	vid    string // the wr_vid cookie, when set
}

// do sends req and reads the reply; on any error the connection is dropped
// so the next request starts on a fresh one.
func (r *rawConn) do(req []byte, timeout time.Duration, wantBody bool) (rawReply, error) {
	if r.c == nil {
		c, err := r.dialer.Dial("tcp", r.addr)
		if err != nil {
			return rawReply{}, fmt.Errorf("loadgen: dial %s: %w", r.addr, err)
		}
		r.c = c
		if r.br == nil {
			r.br = bufio.NewReaderSize(c, 16<<10)
		} else {
			r.br.Reset(c)
		}
	}
	rep, keep, err := r.roundTrip(req, timeout, wantBody)
	if err != nil || !keep {
		r.close()
	}
	return rep, err
}

func (r *rawConn) close() {
	if r.c != nil {
		_ = r.c.Close()
		r.c = nil
	}
}

func (r *rawConn) roundTrip(req []byte, timeout time.Duration, wantBody bool) (rawReply, bool, error) {
	if err := r.c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return rawReply{}, false, fmt.Errorf("loadgen: set deadline: %w", err)
	}
	if _, err := r.c.Write(req); err != nil {
		return rawReply{}, false, fmt.Errorf("loadgen: write request: %w", err)
	}
	return readReply(r.br, wantBody)
}

// readReply reads one HTTP/1.1 reply: the status, the headers it cares for,
// and the body (Content-Length or chunked). keep is false when the server
// closes the connection after this reply.
func readReply(br *bufio.Reader, wantBody bool) (rep rawReply, keep bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return rep, false, fmt.Errorf("loadgen: read status line: %w", err)
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return rep, false, fmt.Errorf("loadgen: status line %q: %w", line, errBadReply)
	}
	if rep.status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return rep, false, fmt.Errorf("loadgen: status line %q: %w", line, errBadReply)
	}
	keep = line[7] == '1' // HTTP/1.1 keeps the connection unless told otherwise
	length, chunked := int64(-1), false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return rep, false, fmt.Errorf("loadgen: read header: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return rep, false, fmt.Errorf("loadgen: header %q: %w", line, errBadReply)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return rep, false, fmt.Errorf("loadgen: content-length %q: %w", value, errBadReply)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				keep = false
			}
		case bytes.EqualFold(name, []byte("Set-Cookie")):
			if v, ok := bytes.CutPrefix(value, []byte("wr_vid=")); ok {
				v, _, _ = bytes.Cut(v, []byte(";"))
				rep.vid = string(v)
			}
		}
	}
	var body io.Writer = io.Discard
	var buf bytes.Buffer
	if wantBody {
		body = &buf
	}
	switch {
	case rep.status == 204 || rep.status == 304 || rep.status/100 == 1:
	case chunked:
		if err := readChunked(br, body); err != nil {
			return rep, false, err
		}
	case length >= 0 && !wantBody:
		if _, err := br.Discard(int(length)); err != nil {
			return rep, false, fmt.Errorf("loadgen: read body: %w", err)
		}
	case length >= 0:
		if _, err := io.CopyN(body, br, length); err != nil {
			return rep, false, fmt.Errorf("loadgen: read body: %w", err)
		}
	default: // the body runs to the end of the connection
		if _, err := io.Copy(body, br); err != nil {
			return rep, false, fmt.Errorf("loadgen: read body: %w", err)
		}
		keep = false
	}
	if wantBody {
		rep.body = buf.Bytes()
	}
	return rep, keep, nil
}

func readChunked(br *bufio.Reader, body io.Writer) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("loadgen: read chunk size: %w", err)
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("loadgen: chunk size %q: %w", line, errBadReply)
		}
		if n == 0 {
			// Trailers, if any, end with an empty line.
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return fmt.Errorf("loadgen: read trailer: %w", err)
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if _, err := io.CopyN(body, br, n); err != nil {
			return fmt.Errorf("loadgen: read chunk: %w", err)
		}
		if _, err := br.Discard(2); err != nil {
			return fmt.Errorf("loadgen: read chunk end: %w", err)
		}
	}
}
