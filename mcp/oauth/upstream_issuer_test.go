package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/tokenstore"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
)

// TestBackcompatMetadataIssuer reproduces the conformance suite's
// auth/2025-03-26-oauth-metadata-backcompat failure in one process
// (docs/upstream/go-sdk-oauth-issuer.md). The server is laid out as the
// suite's mock lays it out: a 2025-03-26 server, so no protected resource
// metadata, with its authorization server metadata at the origin's root
// well-known URL and the endpoints under /oauth. Suite 0.1.16 names the
// issuer <origin>/oauth in that metadata, which RFC 8414 section 3.3 does
// not allow at that URL, and the go-sdk refuses it before anything is
// registered; later versions of the mock name the origin, and the sign-in
// goes on to register and to show the authorization page under /oauth.
func TestBackcompatMetadataIssuer(t *testing.T) {
	discovery := []string{
		"POST /mcp",
		"GET /.well-known/oauth-protected-resource/mcp",
		"GET /.well-known/oauth-protected-resource",
		"GET /.well-known/oauth-authorization-server",
	}
	tests := []struct {
		name         string
		issuerPath   string // the metadata's issuer is the origin and this
		wantErr      string // %[1]s is the origin; "" for a sign-in that reaches the page
		wantRequests []string
	}{
		{
			name:         "issuer with a path at the root well-known URL (conformance 0.1.16)",
			issuerPath:   "/oauth",
			wantErr:      `metadata issuer "%[1]s/oauth" does not match issuer URL "%[1]s"`,
			wantRequests: discovery,
		},
		{
			name:         "issuer the origin (conformance 0.2.0)",
			wantRequests: append(discovery[:len(discovery):len(discovery)], "POST /oauth/register"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newBackcompatServer(t, tc.issuerPath)
			ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
			defer cancel()
			opened := make(chan string, 1)
			open := func(_ context.Context, url string) error {
				select {
				case opened <- url:
				default:
				}
				cancel() // no browser: the test ends at the authorization page
				return nil
			}
			c := mcp.NewConn(remoteServer(s.url+"/mcp", config.TransportHTTP), &mcp.ConnOptions{
				Logger: slog.New(slog.DiscardHandler),
				Auth:   &oauth.Options{Tokens: tokenstore.Open(t.TempDir(), nil)},
			})
			defer c.Close()
			err := c.Login(ctx, open)
			t.Logf("Login: %v", err)
			var page string
			select {
			case page = <-opened:
			default:
			}

			if diff := cmp.Diff(tc.wantRequests, s.seen()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				want := fmt.Sprintf(tc.wantErr, s.url)
				if !errors.Is(err, oauth.ErrNeedsAuth) || !strings.Contains(err.Error(), want) {
					t.Fatalf("Login: %v\nwant oauth.ErrNeedsAuth with %q", err, want)
				}
				if page != "" {
					t.Errorf("the authorization page %s was shown", page)
				}
				return
			}
			if !strings.HasPrefix(page, s.url+"/oauth/authorize?") {
				t.Fatalf("Login: %v; the authorization page shown is %q, want one under %s/oauth/authorize", err, page, s.url)
			}
		})
	}
}

// backcompatServer is the conformance suite's 2025-03-26 backcompat mock,
// up to the authorization page: the MCP endpoint answers 401, the
// metadata is at the root well-known URL, registration is open.
type backcompatServer struct {
	url string

	mu       sync.Mutex
	requests []string // method and path of each request
}

func newBackcompatServer(t *testing.T, issuerPath string) *backcompatServer {
	s := &backcompatServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                s.url + issuerPath,
			"authorization_endpoint":                s.url + "/oauth/authorize",
			"token_endpoint":                        s.url + "/oauth/token",
			"registration_endpoint":                 s.url + "/oauth/register",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported": []string{"none"},
			"code_challenge_methods_supported":      []string{"S256"},
		})
	})
	mux.HandleFunc("POST /oauth/register", func(w http.ResponseWriter, r *http.Request) {
		var md struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		json.NewDecoder(r.Body).Decode(&md)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{
			"client_id": "backcompat-client", "token_endpoint_auth_method": "none", "redirect_uris": md.RedirectURIs,
		})
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *backcompatServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}
