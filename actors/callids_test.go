package actors

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/messages"
)

func TestUniqueCallIDs(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"distinct ids are kept", []string{"a", "b"}, []string{"a", "b"}},
		{"empty ids are generated", []string{"", "b", ""}, []string{"call_3_1_1", "b", "call_3_1_3"}},
		{"a repeated id keeps its first use", []string{"x", "x", "x"}, []string{"x", "call_3_1_2", "call_3_1_3"}},
		{"a generated id never takes one in use", []string{"", "call_3_1_1"}, []string{"call_3_1_1_2", "call_3_1_1"}},
		{"no calls", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []messages.ToolCall
			for _, id := range tt.in {
				calls = append(calls, messages.ToolCall{ID: id, Name: "echo"})
			}
			out := uniqueCallIDs(calls, 3, 1)
			var got []string
			for _, c := range out {
				got = append(got, c.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			for i, c := range calls {
				if c.ID != tt.in[i] {
					t.Errorf("the input was changed: call %d has id %q", i, c.ID)
				}
			}
		})
	}
}
