package jetstream

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strings"
)

// shard returns the index of the stream that holds session.
func (j *Journal) shard(session string) int {
	h := fnv.New32a()
	h.Write([]byte(session))
	return int(h.Sum32() % uint32(len(j.streams)))
}

// entrySubject is the subject of session's journal records.
func (j *Journal) entrySubject(session string) string {
	return fmt.Sprintf("%s.%d.e.%s", j.cfg.Subject, j.shard(session), encodeID(session))
}

// snapSubject is the subject of session's snapshots.
func (j *Journal) snapSubject(session string) string {
	return fmt.Sprintf("%s.%d.s.%s", j.cfg.Subject, j.shard(session), encodeID(session))
}

// encodeID turns a session id into one subject token: ids may hold '.',
// '*', '>' and white space, which subjects reserve.
func encodeID(session string) string { return base64.RawURLEncoding.EncodeToString([]byte(session)) }

// decodeID reverses encodeID on the last token of subject.
func decodeID(subject string) (string, error) {
	tok := subject[strings.LastIndexByte(subject, '.')+1:]
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", fmt.Errorf("subject %q: undecodable session token: %w", subject, err)
	}
	return string(b), nil
}
