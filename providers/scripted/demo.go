package scripted

import "github.com/agcore/agcore/messages"

// Demo returns the stateless script of the offline demo. To any user
// message the model lists the workspace, then reads two files with
// parallel calls, then writes a summary, then answers in text:
//
//	user             -> list_dir {"path":"."}
//	tool (list_dir)  -> read_file {"path":"README.md"} and read_file {"path":"go.mod"}, in parallel
//	tool (read_file) -> write_file {"path":"SUMMARY.md","content":"..."}
//	tool (write_file)-> text, finish reason stop
//
// Each step also says in text what it is about to do. Being stateless, the
// script gives every conversation the same replies, however many run at
// once.
func Demo() Script {
	return Script{
		Stateless: true,
		Rules: []Rule{
			{
				Name:  "answer",
				Match: Match{Tool: "write_file"},
				Reply: Reply{Text: "Done. I listed the workspace, read README.md and go.mod in parallel, " +
					"and wrote a short summary of the project to SUMMARY.md."},
			},
			{
				Name:  "summarise",
				Match: Match{Tool: "read_file"},
				Reply: Reply{
					Text: "Both files are read. I will write the summary now.",
					ToolCalls: []ToolCall{{Name: "write_file", Arguments: `{"path":"SUMMARY.md","content":` +
						`"# Summary\n\nThis workspace is a Go module. README.md explains what it does and how to run it; ` +
						`go.mod names the module and its dependencies.\n"}`}},
				},
			},
			{
				Name:  "read",
				Match: Match{Tool: "list_dir"},
				Reply: Reply{
					Text: "I see the project files. Let me read the README and the module file at the same time.",
					ToolCalls: []ToolCall{
						{Name: "read_file", Arguments: `{"path":"README.md"}`},
						{Name: "read_file", Arguments: `{"path":"go.mod"}`},
					},
				},
			},
			{
				Name:  "explore",
				Match: Match{Role: messages.RoleUser},
				Reply: Reply{
					Text:      "Let me look at the workspace first.",
					ToolCalls: []ToolCall{{Name: "list_dir", Arguments: `{"path":"."}`}},
				},
			},
		},
	}
}
