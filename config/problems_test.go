package config

import "testing"

// TestValidationErrorPositions: every problem in the error is where it is,
// path:line:col, as syntax errors and warnings are, so a terminal or an
// editor links each to its place.
func TestValidationErrorPositions(t *testing.T) {
	data := `{
  "mcp": {
    "servers": [
      {"name": "a", "command": ["x"], "inheritEnv": "yes", "timeout": -1, "foo": 1}
    ]
  }
}`
	_, err := Parse("c.json", []byte(data))
	want := `c.json: 2 problems:
	c.json:4:53: mcp.servers[0].inheritEnv (server "a"): want true or false
	c.json:4:71: mcp.servers[0].timeout (server "a"): want a whole number of milliseconds greater than 0, not -1`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}
