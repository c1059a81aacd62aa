package main

import (
	"io"
	"regexp"
	"sync"
)

// A user answers the questions freecode asks on its terminal while a call
// runs (a server's elicitation, field by field): as one who takes every
// default, says yes to a yes-or-no question without one, and sends the
// form. It reads what freecode prints (its standard error) and types into
// the terminal freecode reads.
type user struct {
	out   io.Writer // where what freecode prints goes on to
	typed io.Writer // the terminal's other side

	mu     sync.Mutex
	screen []byte // printed since the last answer
}

// The prompts, each at the end of what was printed, and the answer typed.
var prompts = []struct {
	re     *regexp.Regexp
	answer string
}{
	{regexp.MustCompile(`(Send|Done)\? \[[Yy]\]es / \[[Nn]\]o \(decline\) / \[c\]ancel: $`), "y"},
	{regexp.MustCompile(`\n    [^\n]*\]: $`), ""},          // a default: keep it
	{regexp.MustCompile(`\n    y/n(, required)?: $`), "y"}, // yes or no, no default
	{regexp.MustCompile(`\n    [^\n]*, required: $`), "conformance"},
	{regexp.MustCompile(`\n    [^\n]*: $`), ""}, // optional: leave it out
}

func (u *user) Write(p []byte) (int, error) {
	u.out.Write(p)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.screen = append(u.screen, p...)
	for _, pr := range prompts {
		if pr.re.Match(u.screen) {
			u.screen = u.screen[:0]
			if _, err := io.WriteString(u.typed, pr.answer+"\n"); err != nil {
				return len(p), err
			}
			break
		}
	}
	return len(p), nil
}
