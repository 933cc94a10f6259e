package toolsys

import "github.com/agcore/agcore/redact"

// redactResult masks a result's content and the strings in its metadata (at
// any depth) with r's Content mode. It returns a copy; the original is not
// modified.
func redactResult(r *redact.Redactor, res Result) Result {
	res.Content = r.Content(res.Content)
	if res.Metadata != nil {
		res.Metadata = redactValue(r, res.Metadata).(map[string]any)
	}
	return res
}

func redactValue(r *redact.Redactor, v any) any {
	switch v := v.(type) {
	case string:
		return r.Content(v)
	case error:
		return r.Content(v.Error())
	case []string:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = r.Content(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(r, e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = redactValue(r, e)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, e := range v {
			out[k] = r.Content(e)
		}
		return out
	}
	return v
}
