package logging

import (
	"context"
	"log/slog"
	"time"

	"github.com/rs/zerolog"
)

// SlogHandler returns a slog.Handler that writes records into l. Levels map
// onto zerolog's (below Debug is trace, Debug, Info, Warn, and Error or above
// is error) and l's level filters records before they are built. Attributes
// become fields; a group qualifies the keys of the attributes added after it
// ("group.key"), as slog specifies, while attributes added before it keep
// their names. The time of a line is l's timestamp. Records pass through l's
// writer, so a logger from New redacts them too.
func SlogHandler(l zerolog.Logger) slog.Handler {
	return &slogHandler{l: l}
}

type slogHandler struct {
	l      zerolog.Logger
	prefix string // the open groups, each followed by "."
	attrs  []qualifiedAttr
}

// qualifiedAttr is an attribute added by WithAttrs with the groups open at
// the time.
type qualifiedAttr struct {
	prefix string
	attr   slog.Attr
}

// Enabled implements slog.Handler.
func (h *slogHandler) Enabled(_ context.Context, level slog.Level) bool {
	zl := zerologLevel(level)
	return zl >= h.l.GetLevel() && zl >= zerolog.GlobalLevel()
}

// Handle implements slog.Handler.
func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	e := h.l.WithLevel(zerologLevel(r.Level))
	if e == nil {
		return nil
	}
	for _, qa := range h.attrs {
		appendAttr(e, qa.prefix, qa.attr)
	}
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(e, h.prefix, a)
		return true
	})
	e.Msg(r.Message)
	return nil
}

// WithAttrs implements slog.Handler.
func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h2 := *h
	h2.attrs = make([]qualifiedAttr, 0, len(h.attrs)+len(attrs))
	h2.attrs = append(h2.attrs, h.attrs...)
	for _, a := range attrs {
		h2.attrs = append(h2.attrs, qualifiedAttr{prefix: h.prefix, attr: a})
	}
	return &h2
}

// WithGroup implements slog.Handler.
func (h *slogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix = h.prefix + name + "."
	return &h2
}

// appendAttr adds a to e under prefix, following slog's rules: values are
// resolved, an empty group is dropped, a group without a key is inlined, and
// an attribute without a key is dropped.
func appendAttr(e *zerolog.Event, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		group := a.Value.Group()
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, ga := range group {
			appendAttr(e, prefix, ga)
		}
		return
	}
	if a.Key == "" {
		return
	}
	key := prefix + a.Key
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		e.Str(key, v.String())
	case slog.KindInt64:
		e.Int64(key, v.Int64())
	case slog.KindUint64:
		e.Uint64(key, v.Uint64())
	case slog.KindFloat64:
		e.Float64(key, v.Float64())
	case slog.KindBool:
		e.Bool(key, v.Bool())
	case slog.KindDuration:
		e.Dur(key, v.Duration())
	case slog.KindTime:
		e.Time(key, v.Time())
	default:
		switch x := v.Any().(type) {
		case error:
			e.AnErr(key, x)
		case time.Duration:
			e.Dur(key, x)
		case []byte:
			e.Bytes(key, x)
		default:
			e.Interface(key, x)
		}
	}
}

// zerologLevel maps a slog level onto zerolog's.
func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l < slog.LevelDebug:
		return zerolog.TraceLevel
	case l < slog.LevelInfo:
		return zerolog.DebugLevel
	case l < slog.LevelWarn:
		return zerolog.InfoLevel
	case l < slog.LevelError:
		return zerolog.WarnLevel
	default:
		return zerolog.ErrorLevel
	}
}
