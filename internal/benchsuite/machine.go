package benchsuite

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine describes where a report was measured.
type Machine struct {
	// GoVersion is the Go release the binary was built with.
	GoVersion string `json:"go_version"`
	// OS and Arch are GOOS and GOARCH.
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// NumCPU is the number of logical CPUs usable by the process.
	NumCPU int `json:"num_cpu"`
	// GOMAXPROCS is the Go scheduler's parallelism.
	GOMAXPROCS int `json:"gomaxprocs"`
	// CPUModel is the "model name" of /proc/cpuinfo; empty when unknown.
	CPUModel string `json:"cpu_model,omitempty"`
	// MemTotal is the machine's memory in bytes; 0 when unknown.
	MemTotal uint64 `json:"mem_total_bytes,omitempty"`
	// Date is when the report was started, in UTC.
	Date time.Time `json:"date"`
}

// DetectMachine describes the running machine. The CPU model and total
// memory come from /proc and are left empty where it is not available.
func DetectMachine() Machine {
	m := Machine{
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Date:       time.Now().UTC().Truncate(time.Second),
	}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		m.MemTotal = parseKB(kb)
	}
	return m
}

// String is a one-line summary of m.
func (m Machine) String() string {
	var b strings.Builder
	b.WriteString(m.GoVersion + " " + m.OS + "/" + m.Arch)
	b.WriteString(", " + strconv.Itoa(m.NumCPU) + " CPU (GOMAXPROCS " + strconv.Itoa(m.GOMAXPROCS) + ")")
	if m.CPUModel != "" {
		b.WriteString(", " + m.CPUModel)
	}
	if m.MemTotal > 0 {
		b.WriteString(", " + strconv.FormatFloat(float64(m.MemTotal)/(1<<30), 'f', 1, 64) + " GiB RAM")
	}
	b.WriteString(", " + m.Date.Format(time.DateOnly))
	return b.String()
}

// procField returns the value of the first "key: value" line of a /proc
// file whose key is key, or "" when there is none.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// parseKB parses a /proc value such as "2048 kB" into bytes; 0 when it is
// not one.
func parseKB(s string) uint64 {
	n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(s, "kB")), 10, 64)
	if err != nil {
		return 0
	}
	return n << 10
}
