package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// OAuth is a remote server's "oauth" key: how FreeCode registers itself
// with the server's authorization server when it signs in. Every field is
// optional: a server that needs sign-in and has no "oauth" key is signed in
// to with dynamic client registration, if its authorization server offers
// it.
type OAuth struct {
	// ClientID ("clientId") is a client registered with the authorization
	// server beforehand. When set, it is the only registration used.
	ClientID string
	// ClientSecret ("clientSecret") is that client's secret, for a
	// confidential client. It may hold ${env:NAME}; it is never printed.
	ClientSecret string
	// ClientMetadataURL ("clientMetadataUrl") is the https URL of a Client
	// ID Metadata Document describing FreeCode, used as the client id by
	// authorization servers that support such documents; others fall back
	// to dynamic registration.
	ClientMetadataURL string
	// Scopes ("scopes") are asked for in place of the ones the server
	// advertises. Scopes a server later demands (403 insufficient_scope)
	// are asked for on top of them.
	Scopes []string
	// CallbackPort ("callbackPort") is the port of the loopback redirect
	// URI, http://127.0.0.1:<port>/callback, for authorization servers that
	// allow only a registered port. Zero means any free port.
	CallbackPort int
}

// The keys of an "oauth" object.
var oauthKeys = []string{"clientId", "clientSecret", "clientMetadataUrl", "scopes", "callbackPort"}

// oauth decodes a server entry's "oauth" object.
func (d *decoder) oauth(key, server string, raw json.RawMessage) *OAuth {
	m, ok := d.object(key, server, raw)
	if !ok {
		return nil
	}
	o := &OAuth{}
	for k, v := range m {
		if isNull(v) {
			continue
		}
		fk := key + "." + k
		switch k {
		case "clientId":
			d.str(fk, server, v, &o.ClientID)
		case "clientSecret":
			d.str(fk, server, v, &o.ClientSecret)
		case "clientMetadataUrl":
			d.str(fk, server, v, &o.ClientMetadataURL)
		case "scopes":
			o.Scopes = d.strings(fk, server, v)
		case "callbackPort":
			var f float64
			if err := json.Unmarshal(v, &f); err != nil || f != math.Trunc(f) || f < 1 || f > 65535 {
				d.fail(fk, server, "want a port number from 1 to 65535")
				continue
			}
			o.CallbackPort = int(f)
		default:
			// A misspelt key would otherwise be ignored in silence, and
			// sign-in would go on without the client it names.
			if i := slices.IndexFunc(oauthKeys, func(want string) bool { return strings.EqualFold(want, k) }); i >= 0 {
				d.fail(fk, server, "unknown key; did you mean %q?", oauthKeys[i])
			} else {
				d.unknown(fk, server, oauthKeys)
			}
		}
	}
	return o
}

// checkOAuth returns the problems of s's "oauth" key, keys relative to the
// entry.
func checkOAuth(s Server) []Problem {
	o := s.OAuth
	if o == nil {
		return nil
	}
	var ps []Problem
	fail := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: ".oauth" + key, Server: s.Name, Msg: fmt.Sprintf(format, args...)})
	}
	if s.Type != TypeRemote {
		fail("", "oauth is for remote servers only")
		return ps
	}
	if strings.ContainsFunc(o.ClientID, isControl) {
		fail(".clientId", "the client id holds a control character")
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		fail(".clientSecret", "a client secret needs the clientId it belongs to")
	}
	if o.ClientMetadataURL != "" {
		if o.ClientID != "" {
			fail(".clientMetadataUrl", "clientId and clientMetadataUrl are two ways to name the client: set one")
		}
		if err := checkClientMetadataURL(o.ClientMetadataURL); err != nil {
			fail(".clientMetadataUrl", "%v", err)
		}
	}
	for i, sc := range o.Scopes {
		if sc == "" || strings.ContainsFunc(sc, func(r rune) bool { return r == ' ' || r == '"' || r == '\\' || isControl(r) }) {
			fail(fmt.Sprintf(".scopes[%d]", i), "a scope is one non-empty word without spaces, quotes or backslashes, not %q", sc)
		}
	}
	for name := range s.Headers {
		if http.CanonicalHeaderKey(name) == "Authorization" {
			fail("", "oauth and an Authorization header both set the Authorization header: drop one")
		}
	}
	return ps
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// checkClientMetadataURL applies the Client ID Metadata Document rules: an
// https URL with a path, since the URL itself is the client id the
// authorization server fetches.
func checkClientMetadataURL(raw string) error {
	if strings.Contains(raw, "${") {
		return fmt.Errorf("the client metadata URL is a public client id: write it out, without ${env:…}")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("want an https URL with a path (and no user info or fragment), such as https://example.com/freecode/client.json")
	}
	return nil
}

// clone returns a copy of o that shares nothing with it.
func (o *OAuth) clone() *OAuth {
	if o == nil {
		return nil
	}
	c := *o
	c.Scopes = slices.Clone(o.Scopes)
	return &c
}

// Equal reports whether o and p configure the same sign-in; nil and an
// empty OAuth are not the same (the key's presence is configuration).
func (o *OAuth) Equal(p *OAuth) bool {
	if o == nil || p == nil {
		return o == p
	}
	return o.ClientID == p.ClientID && o.ClientSecret == p.ClientSecret &&
		o.ClientMetadataURL == p.ClientMetadataURL && slices.Equal(o.Scopes, p.Scopes) &&
		o.CallbackPort == p.CallbackPort
}

// fileOAuth is an "oauth" object as AddServer writes it, and as the
// approval of a project server hashes it.
type fileOAuth struct {
	ClientID          string   `json:"clientId,omitempty"`
	ClientSecret      string   `json:"clientSecret,omitempty"`
	ClientMetadataURL string   `json:"clientMetadataUrl,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	CallbackPort      int      `json:"callbackPort,omitempty"`
}

// toFileOAuth returns nil for an OAuth that sets nothing: an empty "oauth"
// object means what no key means.
func toFileOAuth(o *OAuth) *fileOAuth {
	if o == nil || o.Equal(&OAuth{}) {
		return nil
	}
	return &fileOAuth{
		ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientMetadataURL: o.ClientMetadataURL,
		Scopes: o.Scopes, CallbackPort: o.CallbackPort,
	}
}

// expandOAuth expands ${env:NAME} in the client secret.
func expandOAuth(o *OAuth, lookup func(string) (string, bool)) (*OAuth, error) {
	if o == nil {
		return o, nil
	}
	var errs []error
	for _, f := range []struct {
		key string
		v   *string
	}{{"oauth.clientId", &o.ClientID}, {"oauth.clientSecret", &o.ClientSecret}, {"oauth.clientMetadataUrl", &o.ClientMetadataURL}} {
		if *f.v == "" {
			continue
		}
		x, err := Expand(*f.v, lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.key, err))
			continue
		}
		*f.v = x
	}
	return o, errors.Join(errs...)
}

// redactOAuth hides the client secret.
func redactOAuth(o *OAuth) {
	if o != nil && o.ClientSecret != "" {
		o.ClientSecret = "***"
	}
}
