package harness

// Result is the outcome of one run, as the peer binaries print it (one JSON
// object per run).
type Result struct {
	// Peer is the peer's name.
	Peer string `json:"peer"`
	// Turns is the number of measured turns (the warm-up excluded).
	Turns int `json:"turns"`
	// Concurrency is the number of goroutines running turns.
	Concurrency int `json:"concurrency"`
	// Warmup is the number of turns run before measuring.
	Warmup int `json:"warmup"`
	// WallSeconds is the duration of the measured turns.
	WallSeconds float64 `json:"wall_s"`
	// TurnsPerSecond is Turns / WallSeconds.
	TurnsPerSecond float64 `json:"turns_per_s"`
	// CPUMicrosPerTurn is the client's user plus system CPU time per turn,
	// in microseconds.
	CPUMicrosPerTurn float64 `json:"cpu_us_per_turn"`
	// AllocsPerTurn is the number of heap allocations per turn.
	AllocsPerTurn float64 `json:"allocs_per_turn"`
	// BytesPerTurn is the number of bytes allocated per turn.
	BytesPerTurn float64 `json:"bytes_per_turn"`
	// GCPerKTurn is the number of garbage collections per thousand turns.
	GCPerKTurn float64 `json:"gc_per_kturn"`
	// P50Micros and P99Micros are turn latency percentiles, in
	// microseconds.
	P50Micros float64 `json:"p50_us"`
	P99Micros float64 `json:"p99_us"`
	// PeakRSSKiB is the process's peak resident set size (ru_maxrss), in
	// KiB: start-up, warm-up and the measured turns together.
	PeakRSSKiB int64 `json:"peak_rss_kib"`
	// HeapInuseKiB is the live heap after the run, in KiB.
	HeapInuseKiB uint64 `json:"heap_inuse_kib"`
	// GOMAXPROCS and GoVersion describe the client.
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
}
