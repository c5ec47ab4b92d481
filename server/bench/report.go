package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Row is one figure of the final table: a scenario's measurement, the raw
// limit measured in the same run that it is compared with, and the target
// of issue 5 where there is one.
type Row struct {
	Scenario   string  `json:"scenario"`
	Stack      string  `json:"stack"`
	Metric     string  `json:"metric"`
	Value      float64 `json:"value"`
	Unit       string  `json:"unit"`
	Limit      string  `json:"limit,omitempty"` // what the value is compared with
	LimitValue float64 `json:"limit_value,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"` // Value / LimitValue
	Target     string  `json:"target,omitempty"`
	Met        string  `json:"met,omitempty"` // yes, no, or empty without a target
	// Absent says why there is no value (a process not found, /proc
	// unreadable): Value is then not a measurement.
	Absent string `json:"absent,omitempty"`
}

// vs sets the limit the row is compared with, and the ratio.
func (r Row) vs(limit string, v float64) Row {
	r.Limit, r.LimitValue = limit, v
	if v != 0 {
		r.Ratio = r.Value / v
	}
	return r
}

// beside sets a figure printed beside the value with no ratio: a ratio of
// two ratios says nothing more.
func (r Row) beside(what string, v float64) Row {
	r.Limit, r.LimitValue = what, v
	return r
}

// absent marks the row as having no value, for the reason why ("" keeps it).
func (r Row) absent(why string) Row {
	if why != "" {
		r.Absent, r.Value = why, 0
	}
	return r
}

// target records a target and whether ok met it.
func (r Row) target(desc string, ok bool) Row {
	r.Target, r.Met = desc, "no"
	if ok {
		r.Met = "yes"
	}
	return r
}

// Report is everything one bench run prints.
type Report struct {
	Date     time.Time      `json:"date"`
	Machine  Machine        `json:"machine"`
	Scenario string         `json:"scenario"`
	Stack    string         `json:"stack"`
	Clients  int            `json:"clients"`
	LoadFrom string         `json:"load_avg_start"` // other engineers' work shares the machine
	LoadTo   string         `json:"load_avg_end"`
	Rows     []Row          `json:"rows"`
	Details  map[string]any `json:"details"`         // per-phase raw results
	Notes    []string       `json:"notes,omitempty"` // failed requests of phases that still finished
	Errors   []string       `json:"errors,omitempty"`
}

// noteFailures records a phase's failed requests: a phase tolerates a few
// (see loadSpec.MaxErrors), the reader must still see them.
func (r *Report) noteFailures(phase string, lr loadResult) {
	if lr.Errors > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %d requests failed, the first with: %s", phase, lr.Errors, lr.FirstErr))
	}
}

// writeJSON prints the report for machines.
func (r *Report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write JSON report: %w", err)
	}
	return nil
}

// writeTable prints the report for people.
func (r *Report) writeTable(w io.Writer) error {
	_, err := fmt.Fprintf(w, "\nSeatFlow bench %s, %s stack, %d clients — %s, %d × %s, %s, load average %s → %s\n\n%s",
		r.Scenario, r.Stack, r.Clients, r.Date.Format("2006-01-02 15:04 MST"), r.Machine.NProc, r.Machine.CPU,
		r.Machine.Go, r.LoadFrom, r.LoadTo, formatTable(r.Rows))
	for _, n := range r.Notes {
		if err == nil {
			_, err = fmt.Fprintf(w, "NOTE: %s\n", n)
		}
	}
	for _, e := range r.Errors {
		if err == nil {
			_, err = fmt.Fprintf(w, "ERROR: %s\n", e)
		}
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

var tableHeader = []string{"scenario", "stack", "metric", "value", "limit (same run)", "limit value", "ratio", "target", "met"}

// formatTable lays rows out in aligned columns (plain text that is also a
// valid Markdown table, for BENCHMARKS.md).
func formatTable(rows []Row) string {
	cells := [][]string{tableHeader}
	for _, r := range rows {
		c := []string{r.Scenario, r.Stack, r.Metric, formatValue(r.Value, r.Unit), r.Limit, "", "", r.Target, r.Met}
		if r.Absent != "" {
			c[3] = r.Absent
		}
		if r.Limit != "" {
			c[5] = formatValue(r.LimitValue, r.Unit)
		}
		if r.Ratio != 0 {
			c[6] = strconv.FormatFloat(r.Ratio, 'f', 2, 64)
		}
		cells = append(cells, c)
	}
	width := make([]int, len(tableHeader))
	for _, c := range cells {
		for i, s := range c {
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	var b strings.Builder
	line := func(c []string) {
		b.WriteString("|")
		for i, s := range c {
			b.WriteString(" " + s + strings.Repeat(" ", width[i]-len([]rune(s))) + " |")
		}
		b.WriteString("\n")
	}
	line(cells[0])
	sep := make([]string, len(width))
	for i, n := range width {
		sep[i] = strings.Repeat("-", n)
	}
	line(sep)
	for _, c := range cells[1:] {
		line(c)
	}
	return b.String()
}

// formatValue prints a value with the precision its unit deserves.
func formatValue(v float64, unit string) string {
	switch unit {
	case "/s", "":
		return strconv.FormatFloat(v, 'f', 0, 64) + unit
	case "ms", "%", "MB":
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
	case "s":
		return strconv.FormatFloat(v, 'f', 2, 64) + " " + unit
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " " + unit
}
