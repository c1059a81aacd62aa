package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/oauthtest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
)

// keptClient returns the kept client registration of srv, or nil.
func (e *authEnv) keptClient(srv config.Server) *oauth.ClientRecord {
	return storedAs[oauth.ClientRecord](e, oauth.ClientKey(oauth.SignInKey(srv)))
}

// editKept rewrites the kept client registration of srv with edit.
func (e *authEnv) editKept(srv config.Server, edit func(*oauth.ClientRecord)) {
	e.t.Helper()
	rec := e.keptClient(srv)
	if rec == nil {
		e.t.Fatal("no kept client registration to edit")
	}
	edit(rec)
	b, err := json.Marshal(rec)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.Put(context.Background(), oauth.ClientKey(oauth.SignInKey(srv)), b); err != nil {
		e.t.Fatal(err)
	}
}

// authorizedClients returns the client id of each authorization request,
// in order.
func (e *authEnv) authorizedClients() []string {
	var ids []string
	for _, ev := range e.as.Events("authorize client=") {
		id, _, _ := strings.Cut(strings.TrimPrefix(ev, "authorize client="), " ")
		ids = append(ids, id)
	}
	return ids
}

// TestOAuthRegistrationKept signs in, signs out, and signs in again, on
// authorization servers that register clients for each way of
// authenticating and that publish their metadata each way: the client is
// registered once, and the second sign-in authenticates the way the
// registration said.
func TestOAuthRegistrationKept(t *testing.T) {
	tests := []struct {
		name       string
		setup      oauthtest.Setup
		wantMethod string
		wantIssuer bool // the kept registration names the issuer; false: no metadata
	}{
		{"basic", oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, "client_secret_basic", true},
		{
			"post, the server preferring it to basic",
			oauthtest.Setup{PRM: "header", ASMeta: "oauth", AuthMethods: []string{"client_secret_post", "client_secret_basic"}},
			"client_secret_post", true,
		},
		{"a public client", oauthtest.Setup{PRM: "path", ASMeta: "oauth", AuthMethods: []string{"none"}}, "none", true},
		{"OIDC metadata of an issuer with a path", oauthtest.Setup{PRM: "root", ASMeta: "oidc", ASPath: "/tenant1"}, "client_secret_basic", true},
		{"2025-03-26: no metadata at all", oauthtest.Setup{PRM: "none", ASMeta: "none"}, "client_secret_basic", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAuthEnv(t, tc.setup)
			srv := e.server(nil)
			opts := e.options(nil)
			e.signIn(srv, opts)
			kept := e.keptClient(srv)
			if kept == nil {
				t.Fatal("the registration was not kept")
			}
			wantIssuer := ""
			if tc.wantIssuer {
				wantIssuer = e.as.Issuer
			}
			if kept.Issuer != wantIssuer || kept.Port() == 0 || kept.Registration.ClientID != e.authorizedClients()[0] {
				t.Errorf("kept %+v; want issuer %q, a loopback redirect URI, the client id authorized", kept, wantIssuer)
			}
			if rec := e.stored(srv); rec == nil || rec.Issuer != wantIssuer {
				t.Errorf("the tokens' record names issuer %q, want %q", rec.Issuer, wantIssuer)
			}

			ctx := context.Background()
			if _, err := mcp.SignOut(ctx, srv, nil, opts.Auth); err != nil {
				t.Fatal(err)
			}
			if e.keptClient(srv) == nil {
				t.Fatal("signing out dropped the registration")
			}
			if _, err := e.login(srv, opts); err != nil {
				t.Fatalf("second sign-in: %v\nauthorization server: %q", err, e.as.Events(""))
			}
			ids := e.authorizedClients()
			if n := len(e.as.Events("register")); n != 1 || len(ids) != 2 || ids[0] != ids[1] {
				t.Errorf("%d registrations, authorizations by %q; want 1, and both by its client", n, ids)
			}
			want := []string{"token code method=" + tc.wantMethod, "token code method=" + tc.wantMethod}
			var got []string
			for _, ev := range e.as.Events("token code") {
				got = append(got, strings.Fields(ev)[0]+" "+strings.Fields(ev)[1]+" "+strings.Fields(ev)[2])
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("token requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOAuthRegistrationRenewed: a kept registration that does not fit the
// sign-in is replaced by a new one, which is kept in its place.
func TestOAuthRegistrationRenewed(t *testing.T) {
	tests := []struct {
		name   string
		ttl    time.Duration // the server's client_secret lifetime
		edit   func(*oauth.ClientRecord)
		hold   bool // the kept redirect port is taken
		reused bool
	}{
		{name: "a secret that never expires", reused: true},
		{name: "a secret good for a day", ttl: 24 * time.Hour, reused: true},
		{name: "a secret that expires during the sign-in's wait", ttl: time.Minute},
		{name: "an expired secret", edit: func(r *oauth.ClientRecord) {
			r.Registration.ClientSecretExpiresAt = time.Now().Add(-time.Minute).Truncate(time.Second)
		}},
		{name: "the redirect port taken", hold: true},
		{name: "another authorization server", edit: func(r *oauth.ClientRecord) { r.Issuer = "https://as.example" }},
		{name: "another registration endpoint", edit: func(r *oauth.ClientRecord) { r.RegistrationEndpoint += "2" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth", ClientSecretTTL: tc.ttl})
			srv := e.server(nil)
			e.signIn(srv, e.options(nil))
			first := e.keptClient(srv)
			if tc.edit != nil {
				e.editKept(srv, tc.edit)
			}
			if tc.hold {
				ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(first.Port()))
				if err != nil {
					t.Fatalf("holding the kept port: %v", err)
				}
				defer ln.Close()
			}
			if _, err := e.login(srv, e.options(nil)); err != nil {
				t.Fatalf("second sign-in: %v\nauthorization server: %q", err, e.as.Events(""))
			}
			ids := e.authorizedClients()
			got := struct{ Registrations, Clients int }{len(e.as.Events("register")), len(unique(ids))}
			want := struct{ Registrations, Clients int }{2, 2}
			if tc.reused {
				want = struct{ Registrations, Clients int }{1, 1}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if kept := e.keptClient(srv); kept == nil || kept.Registration.ClientID != ids[len(ids)-1] {
				t.Errorf("the kept registration is not the one the last sign-in used")
			} else if tc.hold && kept.RedirectURI == first.RedirectURI {
				t.Errorf("the registration for another port kept the old redirect URI")
			}
		})
	}
}

func unique(ids []string) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// TestOAuthRegistrationRejected: an authorization server that rejects the
// kept client gets a new registration, once per sign-in.
func TestOAuthRegistrationRejected(t *testing.T) {
	t.Run("its secret expired at the server", func(t *testing.T) {
		e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
		srv := e.server(nil)
		if _, err := e.login(srv, e.options(nil)); err != nil {
			t.Fatal(err)
		}
		e.as.ExpireClientSecrets()
		c, err := e.login(srv, e.options(nil))
		if err != nil {
			t.Fatalf("sign-in with a rejected registration: %v\nauthorization server: %q", err, e.as.Events(""))
		}
		if err := e.echo(c); err != nil {
			t.Fatal(err)
		}
		ids := e.authorizedClients()
		if n := len(e.as.Events("register")); n != 2 || len(ids) != 3 || ids[1] != ids[0] || ids[2] == ids[0] {
			t.Errorf("%d registrations, authorizations by %q; want 2, by the kept client, then by the new one", n, ids)
		}
		if kept := e.keptClient(srv); kept == nil || kept.Registration.ClientID != ids[2] {
			t.Errorf("the new registration was not kept")
		}
	})
	t.Run("bounded", func(t *testing.T) {
		e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
		srv := e.server(nil)
		if _, err := e.login(srv, e.options(nil)); err != nil {
			t.Fatal(err)
		}
		e.as.SetRejectClients(true)
		_, err := e.login(srv, e.options(nil))
		if !errors.Is(err, oauth.ErrNeedsAuth) || !strings.Contains(err.Error(), "invalid_client") {
			t.Fatalf("sign-in with every client rejected: %v; want oauth.ErrNeedsAuth saying invalid_client", err)
		}
		if n, m := len(e.as.Events("register")), len(e.as.Events("authorize")); n != 2 || m != 3 {
			t.Errorf("%d registrations, %d authorizations; want 2 and 3: one new registration, tried once", n, m)
		}
		if kept := e.keptClient(srv); kept != nil {
			t.Errorf("a rejected registration is still kept")
		}
	})
	t.Run("forgotten by the server", func(t *testing.T) {
		// The authorization page no longer knows the client: it shows an
		// error, and the browser never comes back.
		e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
		srv := e.server(nil)
		if _, err := e.login(srv, e.options(nil)); err != nil {
			t.Fatal(err)
		}
		e.as.ForgetClients()
		page := &pageLooker{client: &http.Client{Transport: &http.Transport{}}}
		defer page.client.CloseIdleConnections()
		opts := e.options(nil)
		opts.Auth.LoginWait = 50 * time.Millisecond
		c := mcp.NewConn(srv, opts)
		err := e.noteErr(c.Login(context.Background(), page.open))
		c.Close()
		if !errors.Is(err, oauth.ErrNeedsAuth) || !strings.Contains(err.Error(), "nobody signed in") {
			t.Fatalf("sign-in at a page that refuses the client: %v; want nobody signed in", err)
		}
		if got := page.statuses(); !cmp.Equal(got, []int{http.StatusBadRequest}) {
			t.Errorf("the page answered %v, want 400", got)
		}
		if kept := e.keptClient(srv); kept != nil {
			t.Errorf("the registration the page refused is still kept")
		}
		if _, err := e.login(srv, e.options(nil)); err != nil {
			t.Fatalf("the next sign-in: %v", err)
		}
		if n := len(e.as.Events("register")); n != 2 {
			t.Errorf("%d registrations, want 2", n)
		}
	})
}

// pageLooker opens a page and stays on it, as a user who reads an error.
type pageLooker struct {
	client *http.Client
	mu     sync.Mutex
	got    []int
}

func (p *pageLooker) open(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	p.mu.Lock()
	p.got = append(p.got, resp.StatusCode)
	p.mu.Unlock()
	return nil
}

func (p *pageLooker) statuses() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.got...)
}

// TestOAuthRefreshRejectedClient: a refresh the authorization server
// answers invalid_client ends the sign-in and drops the registration, so
// that the next sign-in registers anew; whether or not the access token
// has lapsed by its own expiry, the server says why it needs a sign-in.
func TestOAuthRefreshRejectedClient(t *testing.T) {
	for _, lapsed := range []bool{false, true} {
		t.Run(fmt.Sprintf("lapsed=%v", lapsed), func(t *testing.T) {
			e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth", AccessTTL: 30e9})
			srv := e.server(nil)
			e.signIn(srv, e.options(nil))
			e.as.ExpireClientSecrets()
			e.as.ExpireAccessTokens()
			if lapsed {
				rec := e.stored(srv)
				rec.Expiry = time.Now().Add(-time.Minute)
				b, _ := json.Marshal(rec)
				if _, err := e.store.Put(context.Background(), oauth.SignInKey(srv), b); err != nil {
					t.Fatal(err)
				}
			}
			c2, err := e.start(srv, e.options(nil))
			if !errors.Is(err, oauth.ErrNeedsAuth) {
				t.Fatalf("Start with a refused client: %v, want oauth.ErrNeedsAuth", err)
			}
			if st := c2.Status(); st.State != mcp.StateNeedsAuth || !strings.Contains(st.LastError, oauth.ClientRefusedReason) {
				t.Errorf("status %v, %q; want needsAuth, %q", st.State, st.LastError, oauth.ClientRefusedReason)
			}
			if kept := e.keptClient(srv); kept != nil {
				t.Errorf("the refused registration is still kept")
			}
		})
	}
}
