// The gocql driver's offline codec (github.com/apache/cassandra-gocql-driver/v2: Marshal / Unmarshal, protocol
// v4) on the conformance corpus: reads conformance/cases.jsonl on standard input and writes, per case, the raw
// line that conformance/drivers/judge.py takes: "unsupported", or "decode_error", or "decoded" and
// "reencoded" / "reencode_error", and for a case with a value "value_encoded" / "value_error": the driver's
// bytes for the Go value built from its JSON form. Types are built from the case's java_type (Cassandra's class name, the form
// the driver parses from result metadata) with gocql.NewNativeType(4, TypeCustom, name).
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"os"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"gopkg.in/inf.v0"
)

type corpusCase struct {
	ID       string          `json:"id"`
	JavaType string          `json:"java_type"`
	Hex      string          `json:"hex"`
	TypeTree json.RawMessage `json:"type_tree"`
	Value    json.RawMessage `json:"value"`
}

// errUnsupported marks a value the driver's Go types cannot hold.
var errUnsupported = errors.New("unsupported")

var durationUnits = []struct {
	unit                string
	months, days, nanos int64
}{{"mo", 1, 0, 0}, {"ms", 0, 0, 1_000_000}, {"us", 0, 0, 1000}, {"ns", 0, 0, 1}, {"y", 12, 0, 0},
	{"w", 0, 7, 0}, {"d", 0, 1, 0}, {"h", 0, 0, 3_600_000_000_000}, {"m", 0, 0, 60_000_000_000},
	{"s", 0, 0, 1_000_000_000}}

// duration parses cqlwire's duration text (1y2mo3d4h5m6s7ms8us9ns, "-" first when negative).
func duration(text string) (gocql.Duration, error) {
	sign := int64(1)
	if strings.HasPrefix(text, "-") {
		sign, text = -1, text[1:]
	}
	var months, days, nanos int64
	for text != "" {
		digits := strings.IndexFunc(text, func(r rune) bool { return r < '0' || r > '9' })
		if digits <= 0 {
			return gocql.Duration{}, fmt.Errorf("bad duration %q", text)
		}
		amount, err := strconv.ParseInt(text[:digits], 10, 64)
		if err != nil {
			return gocql.Duration{}, err
		}
		text = text[digits:]
		found := false
		for _, u := range durationUnits {
			if strings.HasPrefix(text, u.unit) {
				months, days, nanos = months+amount*u.months, days+amount*u.days, nanos+amount*u.nanos
				text, found = text[len(u.unit):], true
				break
			}
		}
		if !found {
			return gocql.Duration{}, fmt.Errorf("bad duration unit %q", text)
		}
	}
	return gocql.Duration{Months: int32(sign * months), Days: int32(sign * days), Nanoseconds: sign * nanos}, nil
}

func floatValue(value interface{}, bits int) (float64, error) {
	text, ok := value.(string)
	if !ok {
		return value.(json.Number).Float64()
	}
	if strings.HasPrefix(text, "NaN(0x") {
		raw, err := strconv.ParseUint(strings.TrimSuffix(text[6:], ")"), 16, 64)
		if err != nil {
			return 0, err
		}
		if bits == 32 {
			return 0, fmt.Errorf("%w: a float NaN with other bits", errUnsupported)
		}
		return math.Float64frombits(raw), nil
	}
	if text == "NaN" { // the quiet NaN of Java and Python; Go's math.NaN() sets a payload bit
		return math.Float64frombits(0x7ff8000000000000), nil
	}
	return strconv.ParseFloat(strings.Replace(text, "Infinity", "Inf", 1), 64)
}

// goValue builds the Go value the driver marshals for a corpus JSON value (its documented type mapping).
func goValue(tree interface{}, value interface{}) (interface{}, error) {
	if value == nil {
		return nil, nil
	}
	if m, ok := value.(map[string]interface{}); ok && m["$empty"] == true {
		return nil, fmt.Errorf("%w: the driver has no way to write the empty value", errUnsupported)
	}
	if name, ok := tree.(string); ok {
		switch name {
		case "tinyint", "smallint", "int", "bigint", "counter":
			return value.(json.Number).Int64()
		case "varint":
			n, ok := new(big.Int).SetString(value.(string), 10)
			if !ok {
				return nil, fmt.Errorf("bad varint %v", value)
			}
			return n, nil
		case "decimal":
			text := strings.ToLower(value.(string))
			mantissa, exponent, _ := strings.Cut(text, "e")
			whole, fraction, _ := strings.Cut(mantissa, ".")
			unscaled, ok := new(big.Int).SetString(whole+fraction, 10)
			exp, err := strconv.ParseInt("0"+exponent, 10, 64)
			if strings.HasPrefix(exponent, "-") || strings.HasPrefix(exponent, "+") {
				exp, err = strconv.ParseInt(exponent, 10, 64)
			}
			if !ok || err != nil {
				return nil, fmt.Errorf("bad decimal %v", value)
			}
			return inf.NewDecBig(unscaled, inf.Scale(int64(len(fraction))-exp)), nil
		case "float":
			f, err := floatValue(value, 32)
			return float32(f), err
		case "double":
			return floatValue(value, 64)
		case "blob":
			return hex.DecodeString(strings.TrimPrefix(value.(string), "0x"))
		case "uuid", "timeuuid":
			return gocql.ParseUUID(value.(string))
		case "inet":
			return net.ParseIP(value.(string)), nil
		case "timestamp":
			if n, ok := value.(json.Number); ok {
				return n.Int64()
			}
			return time.Parse("2006-01-02 15:04:05.000Z07:00", value.(string))
		case "date":
			if _, ok := value.(json.Number); ok {
				return nil, fmt.Errorf("%w: a date beyond the years of time.Time's text form", errUnsupported)
			}
			return value.(string), nil
		case "time":
			text := value.(string)
			clock, fraction, _ := strings.Cut(text, ".")
			t, err := time.Parse("15:04:05", clock)
			if err != nil {
				return nil, err
			}
			nanos, err := strconv.ParseInt((fraction + "000000000")[:9], 10, 64)
			return time.Duration(int64(t.Hour()*3600+t.Minute()*60+t.Second())*1e9 + nanos), err
		case "duration":
			return duration(value.(string))
		case "boolean":
			return value.(bool), nil
		default:
			return value.(string), nil
		}
	}
	parts := tree.([]interface{})
	switch parts[0] {
	case "list", "set", "vector":
		var out []interface{}
		for _, x := range value.([]interface{}) {
			v, err := goValue(parts[1], x)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if out == nil {
			out = []interface{}{}
		}
		return out, nil
	case "map":
		out := map[interface{}]interface{}{}
		for _, pair := range value.([]interface{}) {
			kv := pair.([]interface{})
			k, err := goValue(parts[1], kv[0])
			if err != nil {
				return nil, err
			}
			v, err := goValue(parts[2], kv[1])
			if err != nil {
				return nil, err
			}
			switch k.(type) {
			case []interface{}, []byte, net.IP, *big.Int, *inf.Dec:
				return nil, fmt.Errorf("%w: a Go map key of type %T", errUnsupported, k)
			}
			out[k] = v
		}
		return out, nil
	case "tuple":
		items := value.([]interface{})
		var out []interface{}
		for i, t := range parts[1].([]interface{}) {
			var v interface{}
			if i < len(items) {
				var err error
				if v, err = goValue(t, items[i]); err != nil {
					return nil, err
				}
			}
			out = append(out, v)
		}
		return out, nil
	default:
		fields := value.(map[string]interface{})
		out := map[string]interface{}{}
		for _, f := range parts[2].([]interface{}) {
			field := f.([]interface{})
			name := field[0].(string)
			v, err := goValue(field[1], fields[name])
			if err != nil {
				return nil, err
			}
			out[name] = v
		}
		return out, nil
	}
}

// encodeValue is the driver's bytes for the case's JSON value, its panics turned into errors.
func encodeValue(info gocql.TypeInfo, c corpusCase) (encoded []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	decoder := json.NewDecoder(bytes.NewReader(c.Value))
	decoder.UseNumber()
	var value, tree interface{}
	if err := decoder.Decode(&value); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(c.TypeTree, &tree); err != nil {
		return nil, err
	}
	v, err := goValue(tree, value)
	if err != nil {
		return nil, err
	}
	encoded, err = gocql.Marshal(info, v)
	if err == nil && encoded == nil {
		err = errors.New("encoded as null (no value)")
	}
	return encoded, err
}

func version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/apache/cassandra-gocql-driver/v2" {
				return "cassandra-gocql-driver " + dep.Version
			}
		}
	}
	return "cassandra-gocql-driver"
}

func shorten(text string) string {
	if len(text) > 300 {
		return text[:300]
	}
	return text
}

// typeInfo builds the driver's type, turning its panics into errors.
func typeInfo(javaType string) (info gocql.TypeInfo, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	info = gocql.NewNativeType(4, gocql.TypeCustom, javaType)
	if info.Zero() == nil {
		return nil, fmt.Errorf("no Go type for %s", javaType)
	}
	return info, nil
}

func run(c corpusCase, driver string) (line map[string]interface{}) {
	line = map[string]interface{}{"case": c.ID, "driver": driver}
	info, err := typeInfo(c.JavaType)
	if err != nil {
		line["unsupported"] = shorten(err.Error())
		return line
	}
	data, _ := hex.DecodeString(c.Hex)
	if data == nil {
		data = []byte{}
	}
	target := reflect.New(reflect.TypeOf(info.Zero()))
	stage := "decode_error"
	defer func() {
		if r := recover(); r != nil {
			line[stage] = shorten(fmt.Sprintf("panic: %v", r))
		}
	}()
	if err := gocql.Unmarshal(info, data, target.Interface()); err != nil {
		line["decode_error"] = shorten(err.Error())
		return line
	}
	line["decoded"] = shorten(fmt.Sprintf("%v", target.Elem().Interface()))
	stage = "reencode_error"
	encoded, err := gocql.Marshal(info, target.Elem().Interface())
	switch {
	case err != nil:
		line["reencode_error"] = shorten(err.Error())
	case encoded == nil:
		line["reencode_error"] = "encoded as null (no value)"
	default:
		line["reencoded"] = hex.EncodeToString(encoded)
	}
	if len(c.Value) > 0 {
		if encoded, err := encodeValue(info, c); err != nil {
			line["value_error"] = shorten(err.Error())
		} else {
			line["value_encoded"] = hex.EncodeToString(encoded)
		}
	}
	return line
}

func main() {
	driver := version()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	// Unbuffered: one write per case, so that a case the driver dies on is known.
	encoder := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var c corpusCase
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := encoder.Encode(run(c, driver)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
