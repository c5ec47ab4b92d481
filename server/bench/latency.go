package bench

import (
	"math"
	"slices"
	"time"
)

// Summary describes one set of latency samples.
type Summary struct {
	Count int           `json:"count"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// summarize sorts samples in place and returns their summary. Keeping every
// sample (a few hundred thousand at most per run) is simpler than an HDR
// histogram and exact.
func summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, d := range samples {
		sum += d
	}
	return Summary{
		Count: len(samples),
		Mean:  sum / time.Duration(len(samples)),
		P50:   percentile(samples, 50),
		P99:   percentile(samples, 99),
		Max:   samples[len(samples)-1],
	}
}

// percentile is the nearest-rank percentile of sorted samples: the smallest
// sample with at least p % of the samples at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// ms converts a duration to float milliseconds for the table.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
