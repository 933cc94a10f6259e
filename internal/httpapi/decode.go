package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
)

// decodeBody decodes the request's JSON body into v, a pointer to a flat
// struct, strictly: the body must be one JSON object whose keys are exactly
// the struct's JSON field names (case-sensitive), with values of the right
// types. Every failure is an *Error naming the problem. ServeHTTP has
// checked the Content-Type and the size of the body, and read it. An empty
// body leaves v as it is when optional, and is an error otherwise.
func decodeBody(r *http.Request, v any, optional bool) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: "reading the request body failed", Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if optional {
			return nil
		}
		return apiErr(http.StatusBadRequest, CodeInvalidJSON, "request body is empty; send a JSON object")
	}
	return decodeJSON(data, v)
}

// decodeJSON decodes data into v as decodeBody describes.
func decodeJSON(data []byte, v any) error {
	var fields map[string]json.RawMessage
	if err := strictDecode(data, &fields); err != nil {
		return err
	}
	if fields == nil {
		return apiErr(http.StatusBadRequest, CodeInvalidJSON, "request body must be a JSON object, not null")
	}
	known := jsonFields(v)
	var unknown []string
	for k := range fields {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return apiErr(http.StatusBadRequest, CodeUnknownField, "unknown field %q (known fields: %s)",
			unknown[0], strings.Join(known, ", "))
	}
	return strictDecode(data, v)
}

// strictDecode decodes exactly one JSON value from data into v.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		if e, ok := errors.AsType[*Error](err); ok {
			return e // from a nested object's own decoding
		}
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apiErr(http.StatusBadRequest, CodeInvalidJSON, "request body has data after the JSON value")
	}
	return nil
}

// jsonFields returns the JSON names of the fields of the struct v points
// to, in declaration order.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v).Elem()
	var names []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// jsonError turns a decoding error into a 400 that names the problem.
func jsonError(err error) *Error {
	e := &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Err: err}
	if syn, ok := errors.AsType[*json.SyntaxError](err); ok {
		e.Message = fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn)
		return e
	}
	if typ, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		if typ.Field == "" {
			e.Message = fmt.Sprintf("request body must be a JSON object, not %s", typ.Value)
		} else {
			e.Message = fmt.Sprintf("field %q must be %s, not %s", typ.Field, kindName(typ.Type.Kind()), typ.Value)
		}
		return e
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		e.Message = "malformed JSON: the body ends in the middle of a value"
		return e
	}
	e.Message = fmt.Sprintf("malformed JSON: %v", err)
	return e
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a number"
}
