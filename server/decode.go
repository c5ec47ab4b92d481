package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// readBody reads the whole request body; the body-limit middleware has
// already bounded it, and its 413 error passes through unchanged.
func readBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return nil, he
		}
		return nil, &core.Error{Kind: core.KindInvalid, Code: core.ErrInvalid.Code,
			Message: "could not read the request body", Err: err}
	}
	return body, nil
}

// decodeJSON decodes exactly one JSON object into v (a pointer to a struct
// with json tags), rejecting unknown fields, duplicate keys and keys that
// match a field only when case is ignored, and turns every decoding
// failure into an invalid_request error a client can act on. Free text is
// left as sent: core.CheckText refuses what it must not hold, naming the
// field, rather than storing something else than the client sent.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, v)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return core.Invalidf("request body must hold exactly one JSON object")
	}
	if err := checkKeys(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	return nil
}

func jsonError(err error, v any) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.EOF):
		return core.Invalidf("request body is empty; want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return core.Invalidf("request body is truncated JSON")
	case errors.As(err, &syntax):
		return core.Invalidf("malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return core.Invalidf("request body must be a JSON object")
	case errors.As(err, &typ):
		return core.Invalidf("%s must be %s", typ.Field, describeField(v, typ.Field))
	}
	// Unknown fields have no error type in encoding/json; its message
	// ("json: unknown field \"x\"") is already clear.
	return core.Invalidf("invalid JSON body: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// describeField names the JSON type of v's field tagged name, in words.
func describeField(v any, name string) string {
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return describeType(f.Type)
		}
	}
	return "of another type"
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		// Every integer in this API is an id or an amount.
		return "a positive integer"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	}
	return fmt.Sprintf("a JSON %s", t.Kind())
}
