package mcpwire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// scanValues are JSON values for the scans: plain ones they read, and
// ones they must leave to a decoder.
var scanValues = []string{
	`{}`, `[]`, `""`, `"plain"`, `0`, `-1.5e3`, `true`, `false`, `null`,
	`{"a":1,"b":[true,null,"x"],"c":{"d":{}}}`,
	` { "spaced" : [ 1 , 2 ] } `,
	`"esc \" \\ \/ \b \f \n \r \t é \u00e9 \u2028 \ud83d\ude00"`,
	`"bad \ud800 lone"`, `"\udc00"`, "\"bad \xff utf8\"", "\"split é \xc3\"",
	`{"a":1,"a":2}`, `{"A":1,"a":2}`, `{"k\u0065y":1}`, `{"é":1}`,
	`1e400`, `12345678901234567890`,
	`[[[[[[[[[[1]]]]]]]]]]`,
	strings.Repeat("[", MaxValueDepth+1) + strings.Repeat("]", MaxValueDepth+1),
	strings.Repeat("[", MaxValueDepth) + strings.Repeat("]", MaxValueDepth),
}

// TestValueAgreesWithEncodingJSON: whatever Value reads, it reads as
// encoding/json does (the go-sdk's decoder agrees with it on these shapes:
// mcp's decodeToolResult is checked against the SDK itself).
func TestValueAgreesWithEncodingJSON(t *testing.T) {
	read := 0
	for _, v := range scanValues {
		if checkValue(t, []byte(v)) {
			read++
		}
	}
	if read < 12 {
		t.Errorf("Value read %d of the values, want the plain ones", read)
	}
	for _, v := range []string{"\"bad \xff utf8\"", `"bad \ud800 lone"`, `1e400`, strings.Repeat("[", MaxValueDepth+1) + strings.Repeat("]", MaxValueDepth+1)} {
		if _, ok := Value([]byte(v)); ok {
			t.Errorf("Value read %.40q, which decoders differ on or refuse", v)
		}
	}
}

func FuzzValue(f *testing.F) {
	for _, v := range scanValues {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if json.Valid(b) {
			checkValue(t, b)
		}
	})
}

// checkValue checks Value(b) against encoding/json and reports whether
// Value read it.
func checkValue(t *testing.T, b []byte) bool {
	t.Helper()
	got, ok := Value(trimSpace(b))
	if !ok {
		return false
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: Value read it, encoding/json refused it: %v", b, err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: Value %#v, encoding/json %#v", b, got, want)
	}
	if s, ok := String(trimSpace(b)); ok && s != want {
		t.Errorf("%s: String %q, encoding/json %#v", b, s, want)
	}
	return true
}

func trimSpace(b []byte) []byte {
	return []byte(strings.Trim(string(b), " \t\r\n"))
}

func TestMembersAndElements(t *testing.T) {
	var keys []string
	ok := Members([]byte(` { "a" : 1 , "b":[2,{"c":3}] ,"d":"}"} `), func(key, val []byte) bool {
		keys = append(keys, string(key)+"="+string(val))
		return true
	})
	if want := []string{"a=1", `b=[2,{"c":3}]`, `d="}"`}; !ok || !reflect.DeepEqual(keys, want) {
		t.Errorf("Members: %v %q, want true %q", ok, keys, want)
	}
	var elems []string
	ok = Elements([]byte(`[ 1, "x" ,{"y":[]} ]`), func(val []byte) bool {
		elems = append(elems, string(val))
		return true
	})
	if want := []string{"1", `"x"`, `{"y":[]}`}; !ok || !reflect.DeepEqual(elems, want) {
		t.Errorf("Elements: %v %q, want true %q", ok, elems, want)
	}
	for _, obj := range []string{`[]`, `"x"`, `{"k\n":1}`, `{"é":1}`} {
		if Members([]byte(obj), func(_, _ []byte) bool { return true }) {
			t.Errorf("Members read %s", obj)
		}
	}
	if Members([]byte(`{"a":1,"b":2}`), func(key, _ []byte) bool { return string(key) == "a" }) {
		t.Error("Members went on after its function said no")
	}
}
