package main

import (
	"testing"

	"github.com/agcore/agcore/messages"
)

// TestDescribe_QuestionsAndSampling checks the replay lines of an MCP
// server's question, its answer (field names, no values) and a sampling
// request answered by the session's model.
func TestDescribe_QuestionsAndSampling(t *testing.T) {
	tests := []struct {
		ev   messages.JournalEvent
		want string
	}{
		{messages.ElicitationRequested{ID: "el-1", Server: "files", CallID: "c1", Message: "Which folder?", Mode: "form", Fields: []string{"folder"}},
			`files asks (c1): "Which folder?" · fields folder`},
		{messages.ElicitationResolved{ID: "el-1", Action: "accept", By: "caller", Fields: []string{"folder"}},
			`el-1: accept by caller · fields folder`},
		{messages.SamplingAnswered{Server: "files", CallID: "c1", Model: "m", Text: "hi", Usage: messages.Usage{TotalTokens: 12}},
			`files (c1) · m: "hi" · 12 tokens`},
	}
	for _, tt := range tests {
		if got := describe(tt.ev); got != tt.want {
			t.Errorf("describe(%T) = %q, want %q", tt.ev, got, tt.want)
		}
	}
}
