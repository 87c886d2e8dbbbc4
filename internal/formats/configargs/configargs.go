// Package configargs reads the JSON-able arguments of Keras-like configs
// (layers, losses, metrics, optimizers) into Go structs, with errors that
// name the argument, for every package with a FromConfig.
package configargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Decode reads a config's arguments into dst, a pointer to a struct
// whose json tags are the arguments' Keras names and whose fields hold the
// defaults: an argument dst has no field for, or a value of the wrong
// type, is an error that names it.
func Decode(args map[string]any, dst any) error {
	data, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("the arguments are not values JSON can hold: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The field's path holds the Go names of embedded structs:
			// the argument is its last part.
			field := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
			return fmt.Errorf("argument %q is a JSON %s where %s is wanted", field, te.Value, jsonKind(te.Type))
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("unknown argument %s", name)
		}
		return err
	}
	return nil
}

// jsonKind names the JSON values a Go type takes.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer >= 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(jsonKind(t.Elem()), "an "), "a ") + "s"
	}
	return "an object"
}

// IsNil reports whether v is nil or a nil pointer, which has no config.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
