// Package pyformat writes numbers and fills templates as Python does, for
// the callbacks whose output must match Keras': Repr is Python's repr of a
// float, Format is str.format with keyword arguments.
package pyformat

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Repr writes a float as Python's repr (and str) does, the form Keras'
// CSVLogger and messages use: the shortest digits that read back exactly,
// "1.0" rather than "1", scientific from 1e16 and below 1e-4, and "nan",
// "inf", "-inf".
func Repr(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	if x == 0 {
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(x))))
	// Log10 can be off by one near powers of ten: read the exponent back.
	sci := strconv.FormatFloat(x, 'e', -1, 64)
	if i := strings.IndexByte(sci, 'e'); i >= 0 {
		exp, _ = strconv.Atoi(sci[i+1:])
	}
	if exp < -4 || exp >= 16 {
		return sci
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// Format fills a template the way Python's str.format fills it with
// keyword arguments, as Keras' ModelCheckpoint formats its filepath
// (filepath.format(epoch=epoch + 1, **logs)): "{epoch:02d}", "{val_loss:.2f}",
// "{{" and "}}" for braces. Values are ints or float64s. The format spec
// supports fill, align, sign, zero padding, width, grouping, precision and
// the types d, e, E, f, F, g, G, % and none; a spec Python would reject
// (d for a float) is an error, as it is in Keras.
func Format(template string, values map[string]any) (string, error) {
	var b strings.Builder
	for i := 0; i < len(template); i++ {
		c := template[i]
		switch {
		case c == '{' && i+1 < len(template) && template[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(template) && template[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '}':
			return "", fmt.Errorf("single '}' in %q: write '}}' for a brace", template)
		case c == '{':
			end := strings.IndexByte(template[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("unclosed '{' in %q", template)
			}
			field := template[i+1 : i+end]
			name, spec, _ := strings.Cut(field, ":")
			if strings.ContainsAny(name, "!{[.") {
				return "", fmt.Errorf("field {%s} in %q: only plain names with an optional :spec are supported", field, template)
			}
			v, ok := values[name]
			if !ok {
				return "", fmt.Errorf("%q names {%s}, which is not among the figures: %s", template, name, knownNames(values))
			}
			s, err := formatSpec(v, spec)
			if err != nil {
				return "", fmt.Errorf("field {%s} in %q: %w", field, template, err)
			}
			b.WriteString(s)
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func knownNames(values map[string]any) string {
	return strings.Join(slices.Sorted(maps.Keys(values)), ", ")
}

// formatSpec applies one Python format spec to an int or a float64.
func formatSpec(v any, spec string) (string, error) {
	var (
		fill      = ' '
		align     byte
		sign      byte = '-'
		zero      bool
		width     int
		grouping  byte
		precision = -1
		typ       byte
	)
	s := spec
	if len(s) >= 2 && strings.IndexByte("<>=^", s[1]) >= 0 {
		fill, align, s = rune(s[0]), s[1], s[2:]
	} else if len(s) >= 1 && strings.IndexByte("<>=^", s[0]) >= 0 {
		align, s = s[0], s[1:]
	}
	if len(s) > 0 && strings.IndexByte("+- ", s[0]) >= 0 {
		sign, s = s[0], s[1:]
	}
	if len(s) > 0 && s[0] == '0' {
		zero, s = true, s[1:]
	}
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n > 0 {
		width, _ = strconv.Atoi(s[:n])
		s = s[n:]
	}
	if len(s) > 0 && (s[0] == ',' || s[0] == '_') {
		grouping, s = s[0], s[1:]
	}
	if len(s) > 0 && s[0] == '.' {
		n = 1
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 1 {
			return "", fmt.Errorf("format spec %q: '.' needs a precision", spec)
		}
		precision, _ = strconv.Atoi(s[1:n])
		s = s[n:]
	}
	if len(s) > 1 {
		return "", fmt.Errorf("invalid format spec %q", spec)
	}
	if len(s) == 1 {
		typ = s[0]
	}

	var digits string // without the sign
	var neg bool
	switch x := v.(type) {
	case int:
		switch typ {
		case 0, 'd':
			if precision >= 0 {
				return "", fmt.Errorf("format spec %q: precision not allowed for an integer", spec)
			}
			neg = x < 0
			digits = strconv.FormatInt(int64(x), 10)
			digits = strings.TrimPrefix(digits, "-")
			digits = group(digits, grouping)
		case 'e', 'E', 'f', 'F', 'g', 'G', '%':
			return formatSpec(float64(x), spec)
		default:
			return "", fmt.Errorf("unknown format code '%c' for an integer", typ)
		}
	case float64:
		neg = math.Signbit(x) && !math.IsNaN(x)
		a := math.Abs(x)
		switch typ {
		case 'f', 'F', '%':
			if precision < 0 {
				precision = 6
			}
			if typ == '%' {
				a *= 100
			}
			digits = strconv.FormatFloat(a, 'f', precision, 64)
		case 'e', 'E':
			if precision < 0 {
				precision = 6
			}
			digits = strconv.FormatFloat(a, 'e', precision, 64)
		case 'g', 'G':
			if precision < 0 {
				precision = 6
			}
			digits = strconv.FormatFloat(a, 'g', max(precision, 1), 64)
		case 0:
			if precision < 0 {
				digits = Repr(a)
			} else {
				digits = strconv.FormatFloat(a, 'g', max(precision, 1), 64)
				if !strings.ContainsAny(digits, ".e") {
					digits += ".0"
				}
			}
		default:
			return "", fmt.Errorf("unknown format code '%c' for a float", typ)
		}
		switch {
		case math.IsNaN(x):
			digits = "nan"
		case math.IsInf(x, 0):
			digits = "inf"
		}
		if typ == 'E' || typ == 'F' || typ == 'G' {
			digits = strings.ToUpper(digits)
		}
		if grouping != 0 && !strings.ContainsAny(digits, "eEnN") {
			intPart, frac, hasFrac := strings.Cut(digits, ".")
			digits = group(intPart, grouping)
			if hasFrac {
				digits += "." + frac
			}
		}
		if typ == '%' {
			digits += "%"
		}
	default:
		return "", fmt.Errorf("cannot format a %T", v)
	}

	prefix := ""
	switch {
	case neg:
		prefix = "-"
	case sign == '+':
		prefix = "+"
	case sign == ' ':
		prefix = " "
	}
	if align == 0 {
		align = '>'
		if zero {
			fill, align = '0', '='
		}
	}
	pad := width - len(prefix) - len(digits)
	if pad <= 0 {
		return prefix + digits, nil
	}
	p := strings.Repeat(string(fill), pad)
	switch align {
	case '<':
		return prefix + digits + p, nil
	case '^':
		left := strings.Repeat(string(fill), pad/2)
		return left + prefix + digits + strings.Repeat(string(fill), pad-pad/2), nil
	case '=':
		return prefix + p + digits, nil
	}
	return p + prefix + digits, nil
}

// group inserts a separator every three digits of an integer part.
func group(digits string, sep byte) string {
	if sep == 0 || len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}
