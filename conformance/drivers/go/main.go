// The gocql driver's offline codec (github.com/apache/cassandra-gocql-driver/v2: Marshal / Unmarshal, protocol
// v4) on the conformance corpus: reads conformance/cases.jsonl on standard input and writes, per case, the raw
// line that conformance/drivers/judge.py takes: "unsupported", or "decode_error", or "decoded" and
// "reencoded" / "reencode_error". Types are built from the case's java_type (Cassandra's class name, the form
// the driver parses from result metadata) with gocql.NewNativeType(4, TypeCustom, name).
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

type corpusCase struct {
	ID       string `json:"id"`
	JavaType string `json:"java_type"`
	Hex      string `json:"hex"`
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
