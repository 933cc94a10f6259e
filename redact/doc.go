// Package redact removes credentials from everything agcore lets out of the
// process: provider error messages, tool results, journal events, stream
// events, HTTP bodies, transcripts, CLI output and logs all pass one
// [Redactor].
//
//	r := redact.New()
//	r.Add(apiKey, "")                         // masked as [redacted]
//	r.Add(dbPassword, "<secret_ref:DB_PASS>") // replaced by its placeholder
//	fmt.Println(r.String(err.Error()))
//
// # What is masked
//
// A Redactor masks, wherever they appear in text:
//
//   - every value it was told about with [Redactor.Add] (configured API keys and
//     secrets), also in its JSON-escaped and URL-encoded forms;
//   - the credentials of "Bearer ..." and "Basic ..." authorizations;
//   - the values of the Authorization, Proxy-Authorization, Cookie, Set-Cookie,
//     X-Api-Key and Api-Key headers, written as "Name: value";
//   - keys of well-known shapes: OpenAI ("sk-..."), GitHub ("ghp_...",
//     "github_pat_..."), Slack ("xoxb-..."), AWS access key ids ("AKIA...",
//     "ASIA..."), Google API keys ("AIza...");
//   - token, key and sig parameters of URL queries.
//
// [Redactor.String] also masks values written as name=value or name: value
// whose name says they are a credential (api_key=..., password: ...), and
// [Redactor.JSON] masks the whole value of every object member whose name
// is a [SecretKey]. [Redactor.Content], meant for text a model works with
// (tool results), leaves name=value pairs alone, so that source and
// configuration files the agent edits stay intact.
//
// # What is not promised
//
// A redactor sees text, not intent. A secret that was transformed before it
// reached the text (base64, hex, split over several stream deltas, spelled
// backwards) is not recognised, and neither is a credential of an unknown
// shape that no configuration names. Values shorter than [MinLength] bytes are
// not replaced, because they would match ordinary text everywhere.
package redact
