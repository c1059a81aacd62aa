package urlpolicy

import (
	"net/url"
	"slices"
	"strings"
)

// RedactURL returns raw fit for status, logs and errors: its userinfo is
// "***" (a token often rides as the user name), every query value is "***"
// except one that is just a ${env:NAME} reference (it says where the secret
// comes from and holds none), a query part without "=" is "***" whole, and
// the fragment is dropped. A URL that does not parse is cut before its
// query and fragment, its userinfo hidden.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i]
		}
		if i := strings.LastIndexByte(raw, '@'); i >= 0 {
			if j := strings.Index(raw, "//"); j >= 0 && j < i {
				raw = raw[:j+2] + "***" + raw[i:]
			}
		}
		return raw
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			k, v, ok := strings.Cut(p, "=")
			switch {
			case !ok:
				if p != "" {
					parts[i] = "***"
				}
			case isEnvRef(v):
			default:
				parts[i] = k + "=***"
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment, u.RawFragment = "", ""
	out := u.String()
	if hadUser {
		out = strings.Replace(out, "//", "//***@", 1)
	}
	return out
}

// isEnvRef reports whether v, a query value as written, is exactly one
// ${env:NAME} reference.
func isEnvRef(v string) bool {
	if uv, err := url.QueryUnescape(v); err == nil {
		v = uv
	}
	return strings.HasPrefix(v, "${env:") && strings.HasSuffix(v, "}") &&
		strings.Count(v, "}") == 1 && len(v) > len("${env:}")
}

// URLSecrets returns what of a URL must never be shown: its user name and
// password, its query values and its whole query.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var secrets []string
	if u.User != nil {
		secrets = append(secrets, u.User.Username())
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
	}
	for _, vs := range u.Query() {
		secrets = append(secrets, vs...)
	}
	if u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery)
	}
	return secrets
}

// MinSecretLen is the shortest secret a Redactor hides: replacing a one-,
// two- or three-character value everywhere it occurs would garble every
// message and protect nothing.
const MinSecretLen = 4

// A Redactor shows secrets as "***" in text: errors, logs, a server's
// stderr. It also finds them URL-escaped. The zero value and nil hide
// nothing.
type Redactor struct {
	r *strings.Replacer
}

// NewRedactor returns a Redactor for secrets; those shorter than
// MinSecretLen bytes are left out.
func NewRedactor(secrets ...string) *Redactor {
	var keep []string
	for _, s := range secrets {
		if len(s) >= MinSecretLen {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return &Redactor{}
	}
	// Longest first, so a secret that contains another is hidden whole.
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	keep = slices.Compact(keep)
	pairs := make([]string, 0, 4*len(keep))
	for _, s := range keep {
		pairs = append(pairs, s, "***")
		if q := url.QueryEscape(s); q != s {
			pairs = append(pairs, q, "***")
		}
		if p := url.PathEscape(s); p != s && p != url.QueryEscape(s) {
			pairs = append(pairs, p, "***")
		}
	}
	return &Redactor{r: strings.NewReplacer(pairs...)}
}

// String returns s with every secret shown as "***".
func (r *Redactor) String(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Error returns err with every secret in its message shown as "***"; the
// result unwraps to err, so errors.Is still sees through it.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
