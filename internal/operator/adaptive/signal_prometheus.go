package adaptive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/waitroom/waitroom/queue"
)

// maxPrometheusBody bounds what is read of an answer: the query should
// aggregate to one sample, so a large answer is a mistake, not data.
const maxPrometheusBody = 1 << 20

// PrometheusSignal runs the room's PromQL instant query through the
// Prometheus HTTP API and reads the first sample. The caller's context
// bounds the request.
type PrometheusSignal struct {
	client *http.Client
}

// NewPrometheusSignal queries with client, or a client of its own when nil.
func NewPrometheusSignal(client *http.Client) *PrometheusSignal {
	if client == nil {
		client = &http.Client{}
	}
	return &PrometheusSignal{client: client}
}

// promAnswer is the API's envelope: https://prometheus.io/docs/prometheus/latest/querying/api/
type promAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// promSample is [unix seconds, "value"]: the value is a string so that NaN
// and ±Inf survive JSON.
type promSample [2]json.RawMessage

func (p *PrometheusSignal) Read(ctx context.Context, room string, s queue.Settings) (float64, error) {
	if s.Adaptive == nil {
		return 0, fmt.Errorf("adaptive: read prometheus: room %s has no adaptive settings", room)
	}
	u, err := queryURL(s.Adaptive.PrometheusURL, s.Adaptive.Query)
	if err != nil {
		return 0, fmt.Errorf("adaptive: read prometheus: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("adaptive: read prometheus: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("adaptive: read prometheus: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPrometheusBody))
	if err != nil {
		return 0, fmt.Errorf("adaptive: read prometheus: %w", err)
	}
	v, err := parseAnswer(resp.StatusCode, body)
	if err != nil {
		return 0, fmt.Errorf("adaptive: read prometheus: %w", err)
	}
	return v, nil
}

func queryURL(base, query string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("prometheus_url %q is not an absolute http(s) URL", base)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/api/v1/query"
	u.RawQuery = url.Values{"query": {query}}.Encode()
	return u.String(), nil
}

func parseAnswer(status int, body []byte) (float64, error) {
	var a promAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		if status != http.StatusOK {
			return 0, fmt.Errorf("answered %d %s", status, http.StatusText(status))
		}
		return 0, fmt.Errorf("decode answer: %w", err)
	}
	if a.Status != "success" {
		msg := a.Error
		if msg == "" {
			msg = "status " + strconv.Quote(a.Status)
		}
		return 0, fmt.Errorf("answered %d: %s %s", status, a.ErrorType, msg)
	}
	var sample promSample
	switch a.Data.ResultType {
	case "vector":
		var vec []struct {
			Value promSample `json:"value"`
		}
		if err := json.Unmarshal(a.Data.Result, &vec); err != nil {
			return 0, fmt.Errorf("decode vector: %w", err)
		}
		if len(vec) == 0 {
			return 0, errors.New("the query returned no samples")
		}
		sample = vec[0].Value
	case "scalar":
		if err := json.Unmarshal(a.Data.Result, &sample); err != nil {
			return 0, fmt.Errorf("decode scalar: %w", err)
		}
	default:
		return 0, fmt.Errorf("result type %q: the query must give an instant vector or a scalar", a.Data.ResultType)
	}
	var raw string
	if err := json.Unmarshal(sample[1], &raw); err != nil {
		return 0, fmt.Errorf("decode sample value: %w", err)
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return 0, fmt.Errorf("sample value %q: %w", raw, err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("sample value is %s", raw)
	}
	return v, nil
}
