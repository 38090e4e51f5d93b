package history

import (
	"encoding/csv"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// Row is one minute of the report. Counts (arrivals, admitted, …) are what
// happened from this minute's reading to the next reading (the live
// figures for the last minute); nil where a reading is missing or a counter
// went back (the room's counters were reset).
type Row struct {
	Minute time.Time `json:"minute"`
	// The line at the minute's reading: waiting, in the pre-queue, admitted
	// and not yet done. Nil without a reading.
	Waiting   *int64 `json:"waiting"`
	Scheduled *int64 `json:"scheduled"`
	Active    *int64 `json:"active"`

	Arrivals  *int64 `json:"arrivals"`
	Admitted  *int64 `json:"admitted"`
	Abandoned *int64 `json:"abandoned"`
	NoShows   *int64 `json:"no_shows"`
	Completed *int64 `json:"completed"`

	// Waits of the visitors admitted in this minute, in seconds.
	WaitP50 *float64 `json:"wait_p50_s"`
	WaitP95 *float64 `json:"wait_p95_s"`

	ChallengesIssued int64 `json:"challenges_issued"`
	ChallengesSolved int64 `json:"challenges_solved"`
	Intents          int64 `json:"intents"`
	DegradedSeconds  int64 `json:"degraded_s"`
}

// Summary sums a report up for the printable sale report.
type Summary struct {
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Minutes  int       `json:"minutes"` // minutes with history
	PeakLine int64     `json:"peak_line"`
	// PeakLineAt is the minute of the longest line (waiting and pre-queue).
	PeakLineAt *time.Time `json:"peak_line_at"`
	Arrivals   int64      `json:"arrivals"`
	Admitted   int64      `json:"admitted"`
	Abandoned  int64      `json:"abandoned"`
	NoShows    int64      `json:"no_shows"`
	Completed  int64      `json:"completed"`
	WaitP50    *float64   `json:"wait_p50_s"`
	WaitP95    *float64   `json:"wait_p95_s"`
	// AbandonRate is the share of those who left the line that left
	// before their turn: abandoned ÷ (admitted + abandoned).
	AbandonRate      *float64 `json:"abandon_rate"`
	DegradedMinutes  int64    `json:"degraded_minutes"`
	ChallengesIssued int64    `json:"challenges_issued"`
	ChallengesSolved int64    `json:"challenges_solved"`
	Intents          int64    `json:"intents"`
}

// Report is a room's history over a range.
type Report struct {
	Room    string  `json:"room"`
	Summary Summary `json:"summary"`
	Rows    []Row   `json:"minutes"`
}

// Build makes the report of room's minutes over [from, to). live, when not
// nil, is the room's counters now: the end of the last minute's counts.
func Build(room string, from, to time.Time, minutes []Minute, live *Reading) Report {
	rep := Report{Room: room, Summary: Summary{From: from.UTC(), To: to.UTC(), Minutes: len(minutes)}, Rows: make([]Row, 0, len(minutes))}
	all := map[int]int64{}
	sum := &rep.Summary
	for i, m := range minutes {
		row := Row{Minute: m.At}
		if r := m.Reading; r != nil {
			row.Waiting, row.Scheduled, row.Active = ptr(r.Waiting), ptr(r.Scheduled), ptr(r.Active)
			if line := r.Waiting + r.Scheduled; sum.PeakLineAt == nil || line > sum.PeakLine {
				at := m.At
				sum.PeakLine, sum.PeakLineAt = line, &at
			}
			next := live
			for _, n := range minutes[i+1:] {
				if n.Reading != nil {
					next = n.Reading
					break
				}
			}
			if next != nil {
				row.Arrivals = diff(r.Entered, next.Entered)
				row.Admitted = diff(r.Admitted, next.Admitted)
				row.Abandoned = diff(r.Abandoned, next.Abandoned)
				row.NoShows = diff(r.NoShows, next.NoShows)
				row.Completed = diff(r.Completed, next.Completed)
			}
		}
		row.WaitP50, row.WaitP95 = quantile(m.Waits, 0.50), quantile(m.Waits, 0.95)
		for b, n := range m.Waits {
			all[b] += n
		}
		row.ChallengesIssued, row.ChallengesSolved = m.Added[ChallengesIssued], m.Added[ChallengesSolved]
		row.Intents, row.DegradedSeconds = m.Added[Intents], min(m.Added[DegradedSeconds], 60)
		sum.Arrivals += val(row.Arrivals)
		sum.Admitted += val(row.Admitted)
		sum.Abandoned += val(row.Abandoned)
		sum.NoShows += val(row.NoShows)
		sum.Completed += val(row.Completed)
		sum.ChallengesIssued += row.ChallengesIssued
		sum.ChallengesSolved += row.ChallengesSolved
		sum.Intents += row.Intents
		if row.DegradedSeconds > 0 {
			sum.DegradedMinutes++
		}
		rep.Rows = append(rep.Rows, row)
	}
	sum.WaitP50, sum.WaitP95 = quantile(all, 0.50), quantile(all, 0.95)
	if left := sum.Admitted + sum.Abandoned; left > 0 {
		r := float64(sum.Abandoned) / float64(left)
		sum.AbandonRate = &r
	}
	return rep
}

func ptr(v int64) *int64 { return &v }

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func diff(a, b int64) *int64 {
	if b < a {
		return nil
	}
	return ptr(b - a)
}

// quantile reads the q-quantile of bucketed waits, in seconds rounded to
// the tenth; nil when there are none.
func quantile(buckets map[int]int64, q float64) *float64 {
	var n int64
	keys := make([]int, 0, len(buckets))
	for b, c := range buckets {
		n += c
		keys = append(keys, b)
	}
	if n == 0 {
		return nil
	}
	slices.Sort(keys)
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for _, b := range keys {
		if seen += buckets[b]; seen >= rank {
			v := math.Round(bucketSeconds(b)*10) / 10
			return &v
		}
	}
	return nil
}

// CSVHeader names the CSV's columns: the JSON rows' names, in their order.
var CSVHeader = []string{"minute", "waiting", "scheduled", "active", "arrivals", "admitted", "abandoned", "no_shows",
	"completed", "wait_p50_s", "wait_p95_s", "challenges_issued", "challenges_solved", "intents", "degraded_s"}

// WriteCSV writes the rows as CSV, minutes in RFC 3339 UTC; an unknown
// figure is an empty cell.
func (r Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, row := range r.Rows {
		rec := []string{row.Minute.UTC().Format(time.RFC3339), cell(row.Waiting), cell(row.Scheduled), cell(row.Active),
			cell(row.Arrivals), cell(row.Admitted), cell(row.Abandoned), cell(row.NoShows), cell(row.Completed),
			fcell(row.WaitP50), fcell(row.WaitP95), strconv.FormatInt(row.ChallengesIssued, 10),
			strconv.FormatInt(row.ChallengesSolved, 10), strconv.FormatInt(row.Intents, 10), strconv.FormatInt(row.DegradedSeconds, 10)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func cell(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

func fcell(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}
