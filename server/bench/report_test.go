package bench

import (
	"strings"
	"testing"
)

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{1234.6, "/s", "1235/s"},
		{3, "", "3"},
		{12.345, "ms", "12.3 ms"},
		{4.06, "%", "4.1 %"},
		{87.66, "MB", "87.7 MB"},
		{1.234, "s", "1.23 s"},
		{2.5, "hops", "2.50 hops"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestFormatTable(t *testing.T) {
	tests := []struct {
		name string
		rows []Row
		want string
	}{
		{name: "header only", want: "" +
			"| scenario | stack | metric | value | limit (same run) | limit value | ratio | target | met |\n" +
			"| -------- | ----- | ------ | ----- | ---------------- | ----------- | ----- | ------ | --- |\n"},
		{name: "a row with a limit, a ratio and a target", rows: []Row{
			Row{Scenario: "place", Stack: "real", Metric: "orders/s", Value: 500, Unit: "/s"}.
				vs("DB commit/s", 2000).target("≥ 0.50", false),
			{Scenario: "place", Stack: "real", Metric: "conflicts", Value: 4.25, Unit: "%"},
		}, want: "" +
			"| scenario | stack | metric    | value | limit (same run) | limit value | ratio | target | met |\n" +
			"| -------- | ----- | --------- | ----- | ---------------- | ----------- | ----- | ------ | --- |\n" +
			"| place    | real  | orders/s  | 500/s | DB commit/s      | 2000/s      | 0.25  | ≥ 0.50 | no  |\n" +
			"| place    | real  | conflicts | 4.2 % |                  |             |       |        |     |\n"},
		{name: "a row without a value says why", rows: []Row{
			Row{Scenario: "place", Stack: "real", Metric: "CPU: redis", Value: 12, Unit: "µs"}.absent("not found"),
		}, want: "" +
			"| scenario | stack | metric     | value     | limit (same run) | limit value | ratio | target | met |\n" +
			"| -------- | ----- | ---------- | --------- | ---------------- | ----------- | ----- | ------ | --- |\n" +
			"| place    | real  | CPU: redis | not found |                  |             |       |        |     |\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatTable(tt.rows); got != tt.want {
				t.Errorf("formatTable:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestRowVsAndTarget(t *testing.T) {
	r := Row{Value: 30}.vs("limit", 0)
	if r.Ratio != 0 {
		t.Errorf("ratio against a zero limit = %v, want 0 (undefined, left blank)", r.Ratio)
	}
	r = Row{Value: 30}.vs("limit", 120).target("t", true)
	if r.Ratio != 0.25 || r.Met != "yes" {
		t.Errorf("got %+v", r)
	}
	if !strings.Contains(formatTable([]Row{r}), "| yes |") {
		t.Errorf("met not shown: %s", formatTable([]Row{r}))
	}
}

func TestRenderProgress(t *testing.T) {
	tests := []struct {
		name        string
		done, total int64
		extra       string
		want        string
	}{
		{"half", 50, 100, "", "place [#####-----] 50/100 25/s 2.0s"},
		{"over the total stays full", 120, 100, "", "place [##########] 120/100 60/s 2.0s"},
		{"unknown total", 7, 0, "errors 1", "place 7 4/s 2.0s errors 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renderProgress("place", tt.done, tt.total, 2e9, tt.extra, 10); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
