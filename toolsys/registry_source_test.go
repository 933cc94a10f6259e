package toolsys

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRegistry_Source(t *testing.T) {
	r := NewRegistry(Config{})
	r.MustRegister(&rawTool{name: "read_file"})
	r.MustRegister(&rawTool{name: "codec"}, WithSource(SourceWASM))
	r.MustRegister(&rawTool{name: "mcp__fs__stat"}, WithSource(SourceMCP), WithCategory("mcp"))
	r.MustRegister(&rawTool{name: "spawn_agent"}, WithSource(SourceRuntime))
	r.MustRegister(&rawTool{name: "schedule_create"}, WithSource(SourceSchedule))

	tests := []struct {
		tool string
		want Source
	}{
		{"read_file", SourceBuiltin}, // the documented default
		{"codec", SourceWASM},
		{"mcp__fs__stat", SourceMCP},
		{"spawn_agent", SourceRuntime},
		{"schedule_create", SourceSchedule},
	}
	for _, tt := range tests {
		info, ok := r.Info(tt.tool)
		if !ok || info.Source != tt.want {
			t.Errorf("Info(%s).Source = %q (found %v), want %q", tt.tool, info.Source, ok, tt.want)
		}
		if _, err := r.Call(t.Context(), tt.tool, json.RawMessage(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		st, _ := r.Stats(tt.tool)
		if st.Source != tt.want || st.Calls != 1 {
			t.Errorf("Stats(%s) = %+v, want source %q and 1 call", tt.tool, st, tt.want)
		}
	}
	if info, _ := r.Info("mcp__fs__stat"); info.Category != "mcp" {
		t.Errorf("WithSource dropped the category: %+v", info)
	}
	all := r.AllStats()
	for _, tt := range tests {
		if all[tt.tool].Source != tt.want {
			t.Errorf("AllStats[%s].Source = %q, want %q", tt.tool, all[tt.tool].Source, tt.want)
		}
	}
	var names []string
	for _, tool := range r.ListBySource(SourceWASM) {
		names = append(names, tool.Name())
	}
	if got := strings.Join(names, ","); got != "codec" {
		t.Errorf("ListBySource(wasm) = %q, want codec", got)
	}
	if got := len(r.ListBySource(SourceBuiltin)); got != 1 {
		t.Errorf("ListBySource(builtin) has %d tools, want 1", got)
	}
}

func TestSource_String(t *testing.T) {
	for _, s := range []Source{SourceBuiltin, SourceWASM, SourceMCP, SourceRuntime, SourceSchedule} {
		if s.String() != string(s) || s.String() == "" {
			t.Errorf("String of %q = %q", string(s), s.String())
		}
	}
}
