package logging

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/redact"
)

// Redacted returns a logger whose events are masked by r and then written
// through l, for code that hands a logger it did not build (one an
// embedding program passed in) to something that may log secrets, such as a
// tool. Each event is encoded, masked with [redact.Redactor.JSON], decoded,
// and logged again through l with its level, message and fields in order; l
// adds its own context and timestamp. A disabled l, and the zero Logger
// (which writes nowhere), are returned as they are, and events below l's
// level cost nothing.
func Redacted(l zerolog.Logger, r *redact.Redactor) zerolog.Logger {
	if l.GetLevel() == zerolog.Disabled || !writes(l) {
		return l
	}
	return zerolog.New(r.JSONWriter(relay{l})).Level(l.GetLevel())
}

// writes reports whether l has somewhere to write: false for the zero
// Logger. l's sampler is not consulted, and a global level that disables
// every logger (for now) counts as writing.
func writes(l zerolog.Logger) bool {
	if zerolog.GlobalLevel() == zerolog.Disabled {
		return true
	}
	unsampled := l.Sample(nil)
	return unsampled.Log() != nil
}

// relay logs each JSON event written to it through l.
type relay struct{ l zerolog.Logger }

// Write logs the event p through l. An event that is not a JSON object is
// logged as the message of an event at no level.
func (w relay) Write(p []byte) (int, error) {
	level, msg, fields, err := decodeEvent(p)
	if err != nil {
		w.l.Log().Msg(string(bytes.TrimSpace(p)))
		return len(p), nil
	}
	e := w.l.WithLevel(level)
	if e == nil {
		return len(p), nil
	}
	for _, f := range fields {
		e = e.RawJSON(f.key, f.value)
	}
	e.Msg(msg)
	return len(p), nil
}

type field struct {
	key   string
	value json.RawMessage
}

// decodeEvent splits a zerolog JSON event into its level, its message and
// its other fields, in order.
func decodeEvent(p []byte) (zerolog.Level, string, []field, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return zerolog.NoLevel, "", nil, fmt.Errorf("not a JSON object")
	}
	level, msg := zerolog.NoLevel, ""
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, "", nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, "", nil, err
		}
		switch key {
		case zerolog.LevelFieldName:
			var name string
			if json.Unmarshal(raw, &name) == nil {
				if l, err := zerolog.ParseLevel(name); err == nil {
					level = l
				}
			}
		case zerolog.MessageFieldName:
			_ = json.Unmarshal(raw, &msg)
		default:
			fields = append(fields, field{key, raw})
		}
	}
	return level, msg, fields, nil
}
