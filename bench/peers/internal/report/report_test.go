package report_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/report"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{3}, 3},
		{"odd", []float64{5, 1, 3}, 3},
		{"even", []float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := report.Median(tt.in); got != tt.want {
				t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

const results = `
{"peer":"bare","concurrency":1,"cpu_us_per_turn":100,"allocs_per_turn":200,"bytes_per_turn":2048,"turns_per_s":1000,"p50_us":500,"p99_us":900,"peak_rss_kib":10240}
{"peer":"eino","concurrency":1,"cpu_us_per_turn":250,"allocs_per_turn":500,"bytes_per_turn":4096,"turns_per_s":500,"p50_us":1000,"p99_us":1800,"peak_rss_kib":20480}
{"peer":"bare","concurrency":1,"cpu_us_per_turn":300,"allocs_per_turn":200,"bytes_per_turn":2048,"turns_per_s":1000,"p50_us":500,"p99_us":900,"peak_rss_kib":10240}
{"peer":"bare","concurrency":1,"cpu_us_per_turn":200,"allocs_per_turn":200,"bytes_per_turn":2048,"turns_per_s":1000,"p50_us":500,"p99_us":900,"peak_rss_kib":10240}
{"peer":"bare","concurrency":16,"cpu_us_per_turn":50,"allocs_per_turn":200,"bytes_per_turn":2048,"turns_per_s":4000,"p50_us":500,"p99_us":900,"peak_rss_kib":10240}
`

func TestWrite(t *testing.T) {
	rs, err := report.Read(strings.NewReader(results))
	if err != nil {
		t.Fatal(err)
	}
	sums := report.Summarise(rs)
	if len(sums) != 3 || sums[0].Peer != "bare" || sums[0].Runs != 3 || sums[0].CPUMicrosPerTurn != 200 {
		t.Fatalf("Summarise = %+v, want bare@1 first with 3 runs and median CPU 200", sums)
	}
	var b strings.Builder
	if err := report.Write(&b, sums, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Index(b.String(), "| bare |") > strings.Index(b.String(), "| eino |") {
		t.Errorf("rows not in the order of the results:\n%s", b.String())
	}
	var ordered strings.Builder
	if err := report.Write(&ordered, sums, report.Options{Order: []string{"eino"}}); err != nil {
		t.Fatal(err)
	}
	if strings.Index(ordered.String(), "| eino |") > strings.Index(ordered.String(), "| bare |") {
		t.Errorf("Order [eino] did not put eino first:\n%s", ordered.String())
	}
	for _, want := range []string{
		"| bare | — | 3 | 200 (1.00×) | 200 (1.00×) | 2.0 (1.00×) | 1000 (1.00×) | 0.50 (1.00×) | 0.90 (1.00×) | 10.0 (1.00×) |",
		"| eino | bare | 1 | 250 (1.25×) | 500 (2.50×) | 4.0 (2.00×) | 500 (0.50×) | 1.00 (2.00×) | 1.80 (2.00×) | 20.0 (2.00×) |",
		"Concurrency 16",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestWriteErrors(t *testing.T) {
	sums := report.Summarise([]harness.Result{{Peer: "eino", Concurrency: 1}})
	var b strings.Builder
	if err := report.Write(&b, sums, report.Options{}); !errors.Is(err, report.ErrNoBaseline) {
		t.Errorf("Write without a baseline: %v, want ErrNoBaseline", err)
	}
	if _, err := report.Read(strings.NewReader("{not json\n")); err == nil {
		t.Error("Read accepted a malformed line")
	}
}
