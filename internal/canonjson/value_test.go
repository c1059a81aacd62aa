package canonjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendValue: encoding a decoded value gives the bytes Append gives
// for its source, so a value and its JSON hash alike.
func FuzzAppendValue(f *testing.F) {
	for _, s := range []string{`{"b":[1,{"z":"\u2028","a":"<"}],"a":null}`, `"\ud800"`, `[1.50,-0,true,false]`, `{"a":1,"a":2}`, `{"":{"":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, err := Append(nil, in)
		if err != nil {
			return
		}
		d := json.NewDecoder(bytes.NewReader(in))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return
		}
		got, err := AppendValue(nil, v)
		if err != nil {
			t.Fatalf("AppendValue of %q: %v", in, err)
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("AppendValue of %q = %q, Append gives %q", in, got, want)
		}
	})
}

func TestAppendValueOtherTypes(t *testing.T) {
	type point struct {
		Y, X int
	}
	got, err := AppendValue([]byte("x"), map[string]any{"p": point{1, 2}, "f": 1.5, "n": json.Number("12345678901234567890")})
	if err != nil {
		t.Fatal(err)
	}
	if want := `x{"f":1.5,"n":12345678901234567890,"p":{"X":2,"Y":1}}`; string(got) != want {
		t.Errorf("AppendValue = %s, want %s", got, want)
	}
	if _, err := AppendValue(nil, json.Number("1x")); err == nil {
		t.Error("a bad json.Number was written")
	}
	if _, err := AppendValue(nil, func() {}); err == nil {
		t.Error("a func was written")
	}
}
