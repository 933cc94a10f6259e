package benchsuite

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"time"
)

// median returns the median of xs (0 for none). xs is sorted in place.
func median(xs []float64) float64 { return percentile(xs, 0.5) }

// percentile returns the q-quantile of xs (nearest rank; 0 for none). xs is
// sorted in place.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(q * float64(len(xs)))
	return xs[min(max(i, 0), len(xs)-1)]
}

// micros and millis convert a duration to fractional units.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// sample is a point-in-time reading of the process's counters.
type sample struct {
	wall   time.Time
	cpu    time.Duration // user + system time of the whole process
	allocs uint64        // heap objects allocated so far
	bytes  uint64        // heap bytes allocated so far
}

// allocMetrics are the runtime/metrics read by a sample; reading them does
// not stop the world, unlike runtime.ReadMemStats.
var allocMetricNames = [...]string{"/gc/heap/allocs:objects", "/gc/heap/allocs:bytes"}

// sampler takes samples; it reuses its metric buffer and is not safe for
// concurrent use.
type sampler struct{ buf []metrics.Sample }

func newSampler() *sampler {
	s := &sampler{buf: make([]metrics.Sample, len(allocMetricNames))}
	for i, n := range allocMetricNames {
		s.buf[i].Name = n
	}
	return s
}

func (s *sampler) take() sample {
	metrics.Read(s.buf)
	return sample{wall: time.Now(), cpu: processCPU(), allocs: s.buf[0].Value.Uint64(), bytes: s.buf[1].Value.Uint64()}
}

// delta is the difference between two samples.
type delta struct {
	wall, cpu     time.Duration
	allocs, bytes uint64
}

func (s sample) to(e sample) delta {
	return delta{wall: e.wall.Sub(s.wall), cpu: e.cpu - s.cpu, allocs: e.allocs - s.allocs, bytes: e.bytes - s.bytes}
}

// settle collects garbage and returns freed memory to the OS, so that the
// next RSS reading counts live memory only.
func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// rss returns the resident set size of the process (VmRSS), or 0 where
// /proc is not available.
func rss() uint64 { return parseKB(procField("/proc/self/status", "VmRSS")) }

// rssFile returns the file-backed part of the resident set size (RssFile:
// mapped files such as Badger's memtable logs and tables, which the kernel
// may drop and read again), or 0 where /proc is not available.
func rssFile() uint64 { return parseKB(procField("/proc/self/status", "RssFile")) }

// peakRSS returns the high-water mark of the resident set size (VmHWM), or
// 0 where /proc is not available.
func peakRSS() uint64 { return parseKB(procField("/proc/self/status", "VmHWM")) }

// resetPeakRSS resets VmHWM to the current RSS (Linux 4.0 and later), so
// that peakRSS reports the peak of what follows. It reports whether it
// could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// heapLive returns the bytes of live heap objects after a collection.
func heapLive() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func itoa(n int) string { return strconv.Itoa(n) }
