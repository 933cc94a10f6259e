package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/toolsys/mcp"
)

// PendingElicitation is an MCP server's question waiting for an answer.
type PendingElicitation struct {
	// ID identifies the question in POST .../elicitations/{elicitation_id}.
	ID string `json:"id"`
	// Session is the session the question belongs to; absent for a
	// question of no single session (see Candidates).
	Session string `json:"session,omitempty"`
	// Turn is the session's turn during which it was asked.
	Turn int `json:"turn"`
	// CallID is the tool call that caused the question, when known.
	CallID string `json:"call_id,omitempty"`
	// Candidates are the sessions that had calls in flight on the server
	// when it asked.
	Candidates []string `json:"candidates,omitempty"`
	// Exact says the server's transport tied the question to its call.
	Exact  bool   `json:"exact"`
	Server string `json:"server"`
	// Message is the server's question, as plain text.
	Message string `json:"message"`
	// Mode is "form" (answer Fields) or "url" (open URL).
	Mode string `json:"mode"`
	// Fields are the form's fields, by name.
	Fields []ElicitationField `json:"fields,omitempty"`
	URL    string             `json:"url,omitempty"`
	// Requested is when the question was asked.
	Requested time.Time `json:"requested"`
	// Expires is when the question is cancelled if no one answers.
	Expires time.Time `json:"expires,omitzero"`
}

// ElicitationField is a field of a question's form.
type ElicitationField struct {
	Name string `json:"name"`
	// Type is "string", "number", "integer" or "boolean".
	Type        string `json:"type,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Enum lists the values allowed, when the field is a choice.
	Enum []any `json:"enum,omitempty"`
	// Default is the value a missing answer takes.
	Default  any  `json:"default,omitempty"`
	Required bool `json:"required"`
}

func pendingElicitation(p actors.PendingElicitation) PendingElicitation {
	out := PendingElicitation{
		ID: p.ID, Session: p.Session, Turn: p.Turn, CallID: p.CallID, Candidates: p.Candidates, Exact: p.Exact,
		Server: p.Server, Message: p.Message, Mode: p.Mode, URL: p.URL, Requested: p.Requested, Expires: p.Expires,
	}
	if p.Schema == nil {
		return out
	}
	for _, name := range p.Fields() {
		f := ElicitationField{Name: name, Required: slices.Contains(p.Schema.Required, name)}
		if s := p.Schema.Properties[name]; s != nil {
			f.Type, f.Title, f.Description, f.Enum = s.Type, s.Title, s.Description, s.Enum
			if len(s.Default) > 0 {
				_ = json.Unmarshal(s.Default, &f.Default) // a default that is not JSON is left out
			}
		}
		out.Fields = append(out.Fields, f)
	}
	return out
}

// ElicitationList is the body of GET /v1/sessions/{id}/elicitations and
// GET /v1/elicitations.
type ElicitationList struct {
	Elicitations []PendingElicitation `json:"elicitations"`
}

// ElicitationAnswer is the body of POST .../elicitations/{elicitation_id}.
type ElicitationAnswer struct {
	// Action is "accept" (answer with Content), "decline" or "cancel".
	// Required.
	Action string `json:"action" jsonschema:"required,enum=accept,enum=decline,enum=cancel"`
	// Content is the answer to a form, by field name, for accept. Missing
	// fields take their defaults.
	Content map[string]any `json:"content,omitempty"`
}

// ElicitationResult is the body of a successful answer.
type ElicitationResult struct {
	Session string `json:"session,omitempty"`
	ID      string `json:"id"`
	Action  string `json:"action"`
}

func elicitationList(ps []actors.PendingElicitation) ElicitationList {
	out := ElicitationList{Elicitations: make([]PendingElicitation, len(ps))}
	for i, p := range ps {
		out.Elicitations[i] = pendingElicitation(p)
	}
	return out
}

func (s *Server) handleListElicitations(w http.ResponseWriter, r *http.Request) {
	sess, err := s.open(r)
	if err != nil {
		writeError(w, err)
		return
	}
	pending, err := sess.Elicitations(r.Context())
	if err != nil {
		writeError(w, runtimeError(err))
		return
	}
	writeJSON(w, http.StatusOK, elicitationList(pending))
}

func (s *Server) handleListAllElicitations(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, elicitationList(s.rt.Elicitations()))
}

// decodeElicitationAnswer reads and checks the body of an answer.
func decodeElicitationAnswer(r *http.Request) (mcp.ElicitAnswer, error) {
	var req ElicitationAnswer
	if err := decodeBody(r, &req, false); err != nil {
		return mcp.ElicitAnswer{}, err
	}
	switch a := mcp.ElicitAction(req.Action); a {
	case mcp.ElicitAccept:
		return mcp.ElicitAnswer{Action: a, Content: req.Content}, nil
	case mcp.ElicitDecline, mcp.ElicitCancel:
		if req.Content != nil {
			return mcp.ElicitAnswer{}, apiErr(http.StatusBadRequest, CodeBadRequest, `field "content" goes with action "accept" only`)
		}
		return mcp.ElicitAnswer{Action: a}, nil
	case "":
		return mcp.ElicitAnswer{}, apiErr(http.StatusBadRequest, CodeBadRequest, `field "action" is required ("accept", "decline" or "cancel")`)
	}
	return mcp.ElicitAnswer{}, apiErr(http.StatusBadRequest, CodeBadRequest, `field "action": want "accept", "decline" or "cancel"`)
}

func (s *Server) handleAnswerElicitation(w http.ResponseWriter, r *http.Request) {
	ans, err := decodeElicitationAnswer(r)
	if err != nil {
		writeError(w, err)
		return
	}
	id, err := sessionID(r)
	if err == nil {
		err = s.exists(r, id)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s.answerElicitation(w, r, id, ans)
}

func (s *Server) handleAnswerAnyElicitation(w http.ResponseWriter, r *http.Request) {
	ans, err := decodeElicitationAnswer(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.answerElicitation(w, r, "", ans)
}

// answerElicitation answers question {elicitation_id} of session (""
// for a question of no single session).
func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request, session string, ans mcp.ElicitAnswer) {
	eid := r.PathValue("elicitation_id")
	if err := s.rt.AnswerElicitation(r.Context(), session, eid, ans); err != nil {
		switch {
		case errors.Is(err, actors.ErrUnknownElicitation):
			msg := "no question " + quote(eid) + " of session " + quote(session) + " is pending"
			if session == "" {
				msg = "no question " + quote(eid) + " of no single session is pending"
			}
			err = &Error{Status: http.StatusNotFound, Code: CodeElicitationNotFound, Message: msg, Err: err}
		case errors.Is(err, mcp.ErrElicitationInvalid):
			err = &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: err.Error(), Err: err}
		}
		writeError(w, runtimeError(err))
		return
	}
	writeJSON(w, http.StatusOK, ElicitationResult{Session: session, ID: eid, Action: string(ans.Action)})
}
