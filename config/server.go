package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/freecode/freecode/internal/urlpolicy"
)

// SplitCommand splits a command line into argv the way a POSIX shell would,
// without expanding anything: blanks separate words; 'single quotes' keep
// everything literally; "double quotes" keep everything but a backslash
// before ", \, $ or `; outside quotes a backslash keeps the next character.
// An unterminated quote or a trailing backslash is an error.
func SplitCommand(s string) ([]string, error) {
	var (
		argv  []string
		word  strings.Builder
		inArg bool // a word has started, even if empty (as with "")
	)
	end := func() {
		if inArg {
			argv = append(argv, word.String())
			word.Reset()
			inArg = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			end()
		case '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("command %q ends with a backslash", s)
			}
			i++
			if s[i] != '\n' { // backslash-newline joins lines
				word.WriteByte(s[i])
				inArg = true
			}
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("command %q has an unterminated ' quote", s)
			}
			word.WriteString(s[i+1 : i+1+j])
			inArg = true
			i += j + 1
		case '"':
			inArg = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				word.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("command %q has an unterminated \" quote", s)
			}
		default:
			word.WriteByte(c)
			inArg = true
		}
	}
	end()
	return argv, nil
}

// SecretPrefix is how Expand asks its lookup for a ${secret:NAME}: the
// name with this prefix ("secret:GITHUB_TOKEN"), which no environment
// variable's name can be.
const SecretPrefix = "secret:"

// MissingError is what Expand returns for references its lookup does not
// know: the environment variables and the secrets, each named once, in
// the order they appear.
type MissingError struct {
	Env     []string
	Secrets []string
}

func (e *MissingError) Error() string {
	var parts []string
	switch len(e.Env) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("environment variable %s is not set", e.Env[0]))
	default:
		parts = append(parts, fmt.Sprintf("environment variables %s are not set", strings.Join(e.Env, ", ")))
	}
	switch len(e.Secrets) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("secret %s is not set (`freecode secret set %s`)", e.Secrets[0], e.Secrets[0]))
	default:
		parts = append(parts, fmt.Sprintf("secrets %s are not set (`freecode secret set NAME`)", strings.Join(e.Secrets, ", ")))
	}
	return strings.Join(parts, "; ")
}

// Expand replaces every ${env:NAME} in s with lookup(NAME), and every
// ${secret:NAME} with lookup(SecretPrefix+NAME). References lookup does
// not know are a *MissingError naming them (all of them, if several).
// "$${env:NAME}" is the escape for a literal "${env:NAME}", and
// "$${secret:NAME}" for "${secret:NAME}". Any other "$" is kept as it is.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var (
		b       strings.Builder
		missing MissingError
	)
	for {
		i, prefix := nextRef(s)
		if i < 0 {
			b.WriteString(s)
			break
		}
		if i > 0 && s[i-1] == '$' { // escaped: "$${env:X}" means "${env:X}"
			b.WriteString(s[:i-1])
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				b.WriteString(s[i:])
				break
			}
			b.WriteString(s[i : i+j+1])
			s = s[i+j+1:]
			continue
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			// Not quoted: the rest of a header value is often the token.
			return "", fmt.Errorf("unterminated %s reference (no closing brace)", prefix)
		}
		name := s[i+len(prefix) : i+j]
		if name == "" {
			return "", fmt.Errorf("empty variable name in %s}", prefix)
		}
		key, list := name, &missing.Env
		if prefix == "${secret:" {
			key, list = SecretPrefix+name, &missing.Secrets
		}
		v, ok := lookup(key)
		if !ok && !slices.Contains(*list, name) {
			*list = append(*list, name)
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
	if len(missing.Env) > 0 || len(missing.Secrets) > 0 {
		return "", &missing
	}
	return b.String(), nil
}

// nextRef finds the next ${env: or ${secret: in s: its index and which.
func nextRef(s string) (int, string) {
	e, x := strings.Index(s, "${env:"), strings.Index(s, "${secret:")
	switch {
	case e < 0 && x < 0:
		return -1, ""
	case x < 0 || e >= 0 && e < x:
		return e, "${env:"
	}
	return x, "${secret:"
}

// Expanded returns a copy of s with ${env:NAME} and ${secret:NAME}
// expanded in its env values, header values, url and OAuth fields. The error names the field and the missing
// variables, never a value.
func (s Server) Expanded(lookup func(string) (string, bool)) (Server, error) {
	out := s.clone()
	var errs []error
	for k, v := range out.Env {
		x, err := Expand(v, lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("env %s: %w", k, err))
		}
		out.Env[k] = x
	}
	for k, v := range out.Headers {
		x, err := Expand(v, lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("header %s: %w", k, err))
		}
		out.Headers[k] = x
	}
	u, err := Expand(out.URL, lookup)
	if err != nil {
		errs = append(errs, fmt.Errorf("url: %w", err))
	}
	out.URL = u
	if out.OAuth, err = expandOAuth(out.OAuth, lookup); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return Server{}, fmt.Errorf("server %s: %w", s.Name, errors.Join(errs...))
	}
	return out, nil
}

// Redacted returns a copy of s fit for status, logs and errors: every env
// and header value is "***", and the url is redacted the one way FreeCode
// redacts URLs (urlpolicy.RedactURL: userinfo and query values hidden).
func (s Server) Redacted() Server {
	out := s.clone()
	for k := range out.Env {
		out.Env[k] = "***"
	}
	for k := range out.Headers {
		out.Headers[k] = "***"
	}
	if out.URL != "" {
		out.URL = urlpolicy.RedactURL(out.URL)
	}
	redactOAuth(out.OAuth)
	return out
}

// clone returns a copy of s that shares no slice or map with it.
func (s Server) clone() Server {
	s.Command = slices.Clone(s.Command)
	s.Env = maps.Clone(s.Env)
	s.Headers = maps.Clone(s.Headers)
	s.OAuth = s.OAuth.clone()
	s.Registry = s.Registry.clone()
	if s.Sandbox != nil {
		b := s.Sandbox.clone()
		s.Sandbox = &b
	}
	return s
}

// Equal reports whether s and o are the same entry: the Manager restarts a
// server whose entry is not Equal to the running one. A nil and an empty
// map or command are equal. DeferTools is left out: it decides what
// providers are sent, not how the server runs. So are Start and
// IdleTimeout, which decide when the Manager runs the server and which it
// applies to the running one in place, and PinningOff, which decides how
// its tools are registered. Registry is compared: another identity is
// another server for the organization's policy and the approval.
func (s Server) Equal(o Server) bool {
	return s.Name == o.Name && s.Type == o.Type && s.Enabled == o.Enabled &&
		(s.Registry == nil) == (o.Registry == nil) && (s.Registry == nil || *s.Registry == *o.Registry) &&
		slices.Equal(s.Command, o.Command) && maps.Equal(s.Env, o.Env) &&
		s.Cwd == o.Cwd && s.InheritEnv == o.InheritEnv &&
		s.URL == o.URL && s.Transport == o.Transport && maps.Equal(s.Headers, o.Headers) &&
		s.CABundle == o.CABundle && s.ClientCert == o.ClientCert && s.ClientKey == o.ClientKey && s.OAuth.Equal(o.OAuth) &&
		s.Timeout == o.Timeout && s.ToolTimeout == o.ToolTimeout &&
		s.ProtocolVersion == o.ProtocolVersion && s.MaxMessageBytes == o.MaxMessageBytes &&
		s.Scope == o.Scope && equalSandbox(s.Sandbox, o.Sandbox)
}

// Server returns the server named name, or false.
func (c *Config) Server(name string) (Server, bool) {
	for _, s := range c.MCP.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}
