package httpapi

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// MetricsReader collects the runtime's metrics on demand;
// *sdkmetric.ManualReader implements it. It must be safe for concurrent
// use.
type MetricsReader interface {
	Collect(ctx context.Context, rm *metricdata.ResourceMetrics) error
}

// writeOTel writes the metrics of rm in the Prometheus text format, a
// family per metric, sorted by name: an instrument's dots become
// underscores, seconds get _seconds and monotonic sums _total (so
// agcore.tool.duration is agcore_tool_duration_seconds and agcore.turns
// agcore_turns_total); labels are the attributes, in order of their keys.
func writeOTel(p *promWriter, rm *metricdata.ResourceMetrics) {
	var ms []metricdata.Metrics
	for _, sm := range rm.ScopeMetrics {
		ms = append(ms, sm.Metrics...)
	}
	slices.SortFunc(ms, func(a, b metricdata.Metrics) int { return cmp.Compare(a.Name, b.Name) })
	for _, m := range ms {
		base := promName(m.Name, m.Unit)
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			writeSum(p, base, m.Description, d.IsMonotonic, d.DataPoints)
		case metricdata.Sum[float64]:
			writeSum(p, base, m.Description, d.IsMonotonic, d.DataPoints)
		case metricdata.Gauge[int64]:
			writeGauge(p, base, m.Description, d.DataPoints)
		case metricdata.Gauge[float64]:
			writeGauge(p, base, m.Description, d.DataPoints)
		case metricdata.Histogram[int64]:
			writeHistogram(p, base, m.Description, d.DataPoints)
		case metricdata.Histogram[float64]:
			writeHistogram(p, base, m.Description, d.DataPoints)
		}
	}
}

// promName turns an instrument's name and unit into a family name.
func promName(name, unit string) string {
	var sb strings.Builder
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == ':', r >= '0' && r <= '9' && i > 0:
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
	}
	switch unit {
	case "s":
		sb.WriteString("_seconds")
	case "By":
		sb.WriteString("_bytes")
	}
	return sb.String()
}

func writeSum[N int64 | float64](p *promWriter, name, help string, monotonic bool, pts []metricdata.DataPoint[N]) {
	typ := "gauge"
	if monotonic {
		typ, name = "counter", name+"_total"
	}
	p.family(name, typ, help)
	for _, pt := range sortedPoints(pts) {
		p.sample(name, float64(pt.Value), labelsOf(pt.Attributes)...)
	}
}

func writeGauge[N int64 | float64](p *promWriter, name, help string, pts []metricdata.DataPoint[N]) {
	p.family(name, "gauge", help)
	for _, pt := range sortedPoints(pts) {
		p.sample(name, float64(pt.Value), labelsOf(pt.Attributes)...)
	}
}

func writeHistogram[N int64 | float64](p *promWriter, name, help string, pts []metricdata.HistogramDataPoint[N]) {
	p.family(name, "histogram", help)
	slices.SortFunc(pts, func(a, b metricdata.HistogramDataPoint[N]) int {
		return cmp.Compare(a.Attributes.Encoded(attribute.DefaultEncoder()), b.Attributes.Encoded(attribute.DefaultEncoder()))
	})
	for _, pt := range pts {
		labels := labelsOf(pt.Attributes)
		var cum uint64
		for i, bound := range pt.Bounds {
			cum += pt.BucketCounts[i]
			p.sample(name+"_bucket", float64(cum), append(slices.Clip(labels), "le", strconv.FormatFloat(bound, 'g', -1, 64))...)
		}
		p.sample(name+"_bucket", float64(pt.Count), append(slices.Clip(labels), "le", "+Inf")...)
		p.sample(name+"_sum", float64(pt.Sum), labels...)
		p.sample(name+"_count", float64(pt.Count), labels...)
	}
}

func sortedPoints[N int64 | float64](pts []metricdata.DataPoint[N]) []metricdata.DataPoint[N] {
	slices.SortFunc(pts, func(a, b metricdata.DataPoint[N]) int {
		return cmp.Compare(a.Attributes.Encoded(attribute.DefaultEncoder()), b.Attributes.Encoded(attribute.DefaultEncoder()))
	})
	return pts
}

// labelsOf returns the attributes as alternating label names and values,
// names made valid for Prometheus.
func labelsOf(s attribute.Set) []string {
	out := make([]string, 0, 2*s.Len())
	for _, kv := range s.ToSlice() {
		out = append(out, promName(string(kv.Key), ""), kv.Value.Emit())
	}
	return out
}
