package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"time"
)

// hasBody reports whether r carries a body, of known length or chunked.
func hasBody(r *http.Request) bool { return r.ContentLength != 0 }

// checkContentType refuses a request whose body is not declared as JSON.
// A browser page can send a body without a CORS preflight only as
// text/plain, a form or a Blob without type, so requiring application/json
// also makes a foreign page ask first. The error does not repeat the
// header.
func checkContentType(r *http.Request) *Error {
	if !hasBody(r) {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return apiErr(http.StatusUnsupportedMediaType, CodeUnsupportedMedia,
			"the request has a body but no Content-Type; send Content-Type: application/json")
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return apiErr(http.StatusUnsupportedMediaType, CodeUnsupportedMedia,
			"the request body must be JSON; send Content-Type: application/json")
	}
	return nil
}

// readBody reads r's whole body, at most Config.MaxBodyBytes of it, before
// the read deadline ServeHTTP set (Config.BodyTimeout), then lifts the
// deadline so that it cannot cut the response (an SSE stream may last for
// hours), and gives the handler what was read. A body that does not arrive
// in time is a 408 and closes the connection. On error the deadline stays:
// it bounds net/http's discarding of the rest of the body.
func (s *Server) readBody(w http.ResponseWriter, rc *http.ResponseController, r *http.Request) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge,
				Message: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit), Err: err}
		}
		w.Header().Set("Connection", "close")
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &Error{Status: http.StatusRequestTimeout, Code: CodeRequestTimeout,
				Message: fmt.Sprintf("the request body did not arrive within %v (server body timeout)", s.cfg.BodyTimeout), Err: err}
		}
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: "reading the request body failed", Err: err}
	}
	_ = rc.SetReadDeadline(time.Time{})
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.ContentLength = int64(len(data))
	return nil
}
