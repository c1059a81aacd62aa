package mcpserve

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShownArgs(t *testing.T) {
	long := strings.Repeat("y", maxShownArgs)
	cut := `"` + long[:maxShownValue] + `"…(2000 characters in all)`
	manyKeys := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%05d":1`, i)
		}
		return b.String() + "}"
	}
	tests := []struct {
		name, raw string
		want      string // "" to check only the length
		whole     bool
	}{
		{"short", `{"a":"b"}`, `{"a":"b"}`, true},
		{"at the bound", `{"a":"` + long[:maxShownArgs-8] + `"}`, `{"a":"` + long[:maxShownArgs-8] + `"}`, true},
		{"nested, every key kept", `{"a":` + `"` + long + `","b":{"c":[1,"` + long + `",{"d":null}],"e":[]},"f":true}`,
			`{"a": ` + cut + `, "b": {"c": [1, ` + cut + `, {"d": null}], "e": []}, "f": true}`, false},
		{"array of long strings", `["` + long + `","` + long + `"]`, `[` + cut + `, ` + cut + `]`, false},
		{"escaped", `{"a\u202e":"` + long + `"}`, `{"a\u202e": ` + cut + `}`, false},
		{"too many keys to list", manyKeys(5000), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, whole := shownArgs([]byte(tc.raw))
			if whole != tc.whole || tc.want != "" && got != tc.want {
				t.Errorf("shownArgs = %q, %v\nwant %q, %v", got, whole, tc.want, tc.whole)
			}
			if n := utf8.RuneCountInString(got); n > maxListing+100 {
				t.Errorf("shown in %d characters; want at most about %d", n, maxListing)
			}
			if tc.want == "" && !strings.Contains(got, "the listing stops at") {
				t.Errorf("a listing cut at its bound does not say so: …%s", got[len(got)-80:])
			}
		})
	}
}
