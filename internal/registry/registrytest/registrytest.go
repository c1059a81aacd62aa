// Package registrytest is an MCP Registry on loopback, for tests: the
// API's paths and shapes (the registry project's openapi.yaml, see
// ../testdata/NOTICE), with cursors, search, version=latest and deleted
// versions hidden unless asked for.
package registrytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/freecode/freecode/internal/registry"
)

// Registry is a registry serving a fixed list of versions.
type Registry struct {
	URL string
	// Requests counts the requests answered.
	Requests atomic.Int64

	srv      *httptest.Server
	versions []registry.Response // by name, then newest first
}

// New serves versions (each server's newest first, as Versions answers)
// on loopback until Close.
func New(versions []registry.Response) *Registry {
	r := &Registry{versions: versions}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v0.1/servers", r.list)
	mux.HandleFunc("GET /v0.1/servers/{name}/versions", r.serverVersions)
	mux.HandleFunc("GET /v0.1/servers/{name}/versions/{version}", r.version)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Requests.Add(1)
		mux.ServeHTTP(w, req)
	}))
	r.URL = r.srv.URL
	return r
}

// Close stops the server.
func (r *Registry) Close() { r.srv.Close() }

// Handler returns the registry's handler, for timing it without a network.
func (r *Registry) Handler() http.Handler { return r.srv.Config.Handler }

// defaultLimit and maxLimit are the official registry's.
const (
	defaultLimit = 30
	maxLimit     = 100
)

func (r *Registry) list(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	limit := defaultLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "invalid limit")
			return
		}
		limit = min(n, maxLimit)
	}
	search := strings.ToLower(q.Get("search"))
	version := q.Get("version")
	deleted := q.Get("include_deleted") == "true"
	// The cursor is opaque to clients; here it is the name and version
	// of the last item of the page before.
	cursor := q.Get("cursor")
	started := cursor == ""
	var page []registry.Response
	next := ""
	for _, v := range r.versions {
		if !started {
			started = key(v) == cursor
			continue
		}
		if search != "" && !strings.Contains(strings.ToLower(v.Server.Name), search) {
			continue
		}
		if !deleted && v.Status() == registry.StatusDeleted {
			continue
		}
		switch version {
		case "":
		case "latest":
			if v.Meta.Official == nil || !v.Meta.Official.IsLatest {
				continue
			}
		default:
			if v.Server.Version != version {
				continue
			}
		}
		if len(page) == limit {
			next = key(page[len(page)-1])
			break
		}
		page = append(page, v)
	}
	if !started {
		writeError(w, http.StatusBadRequest, "invalid cursor")
		return
	}
	writeJSON(w, registry.List{Servers: nonNil(page), Metadata: registry.ListMetadata{NextCursor: next, Count: len(page)}})
}

func (r *Registry) serverVersions(w http.ResponseWriter, req *http.Request) {
	name := req.PathValue("name")
	deleted := req.URL.Query().Get("include_deleted") == "true"
	var out []registry.Response
	for _, v := range r.versions {
		if v.Server.Name == name && (deleted || v.Status() != registry.StatusDeleted) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		writeError(w, http.StatusNotFound, "Server not found")
		return
	}
	writeJSON(w, registry.List{Servers: out, Metadata: registry.ListMetadata{Count: len(out)}})
}

func (r *Registry) version(w http.ResponseWriter, req *http.Request) {
	name, version := req.PathValue("name"), req.PathValue("version")
	deleted := req.URL.Query().Get("include_deleted") == "true"
	for _, v := range r.versions {
		if v.Server.Name != name || !deleted && v.Status() == registry.StatusDeleted {
			continue
		}
		if v.Server.Version == version || version == "latest" && v.Meta.Official != nil && v.Meta.Official.IsLatest {
			writeJSON(w, v)
			return
		}
	}
	writeError(w, http.StatusNotFound, "Server not found")
}

func key(v registry.Response) string { return v.Server.Name + ":" + v.Server.Version }

func nonNil(l []registry.Response) []registry.Response {
	if l == nil {
		return []registry.Response{}
	}
	return l
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// Version returns a Response of s with the registry's metadata.
func Version(s registry.Server, status string, latest bool) registry.Response {
	at := time.Date(2025, 10, 1, 12, 0, 0, 0, time.UTC)
	o := &registry.Official{Status: status, PublishedAt: at, UpdatedAt: at, IsLatest: latest}
	if status == registry.StatusDeprecated {
		o.StatusMessage = "Please upgrade to " + s.Name + " 1.4.0"
	}
	return registry.Response{Server: s, Meta: registry.Meta{Official: o}}
}

// SchemaURL is the $schema the fixture's server.json name.
const SchemaURL = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"

// EverythingName is the registry name of server-everything in Servers.
const EverythingName = "io.github.modelcontextprotocol/everything"

// Servers returns the fixture's versions: server-everything from npm at
// everythingVersion; a PyPI server with a required secret and a required
// plain variable and an argument, whose 1.3.0 is deprecated and 1.2.0
// deleted; an OCI image pinned by digest; a remote server with a URL
// variable and a secret header; a server whose only version is deleted;
// and one published only on NuGet.
func Servers(everythingVersion string) []registry.Response {
	stdio := registry.Transport{Type: "stdio"}
	weather := func(v string) registry.Server {
		return registry.Server{
			Schema: SchemaURL, Name: "io.example/weather", Title: "Weather",
			Description: "Forecasts and alerts from the Example weather service", Version: v,
			Repository: &registry.Repository{URL: "https://github.com/example/weather-mcp", Source: "github"},
			Packages: []registry.Package{{
				RegistryType: registry.TypePyPI, RegistryBaseURL: "https://pypi.org", Identifier: "mcp-weather", Version: v,
				RuntimeHint: "uvx", Transport: stdio,
				PackageArguments: []registry.Argument{
					{Type: "named", Name: "--units", Input: registry.Input{Description: "metric or imperial", Default: "metric", Choices: []string{"metric", "imperial"}}},
					{Type: "positional", ValueHint: "region", Input: registry.Input{Description: "The region forecast", IsRequired: true}},
				},
				EnvironmentVariables: []registry.KeyValueInput{
					{Name: "WEATHER_API_KEY", Input: registry.Input{Description: "Your Example weather API key", IsRequired: true, IsSecret: true}},
					{Name: "WEATHER_ACCOUNT", Input: registry.Input{Description: "Your account's id", IsRequired: true}},
					{Name: "WEATHER_DEBUG", Input: registry.Input{Description: "Log requests", Format: "boolean"}},
				},
			}},
		}
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	return []registry.Response{
		Version(registry.Server{
			Schema: SchemaURL, Name: EverythingName, Title: "Everything",
			Description: "MCP server that exercises all the features of the MCP protocol", Version: everythingVersion,
			Repository: &registry.Repository{URL: "https://github.com/modelcontextprotocol/servers", Source: "github", Subfolder: "src/everything"},
			Packages: []registry.Package{{
				RegistryType: registry.TypeNPM, RegistryBaseURL: "https://registry.npmjs.org",
				Identifier: "@modelcontextprotocol/server-everything", Version: everythingVersion, Transport: stdio,
			}},
		}, registry.StatusActive, true),
		Version(weather("1.4.0"), registry.StatusActive, true),
		Version(weather("1.3.0"), registry.StatusDeprecated, false),
		Version(weather("1.2.0"), registry.StatusDeleted, false),
		Version(registry.Server{
			Schema: SchemaURL, Name: "io.example/sqlite", Title: "SQLite",
			Description: "Query a SQLite database", Version: "1.0.0",
			Packages: []registry.Package{{
				RegistryType: registry.TypeOCI, Identifier: "ghcr.io/example/mcp-sqlite:1.0.0@" + digest, Transport: stdio,
				EnvironmentVariables: []registry.KeyValueInput{
					{Name: "DB_PATH", Input: registry.Input{Description: "The database file", IsRequired: true, Format: "filepath"}},
				},
			}},
		}, registry.StatusActive, true),
		Version(registry.Server{
			Schema: SchemaURL, Name: "io.example/tickets", Title: "Tickets",
			Description: "Your team's tickets, remotely", Version: "2.1.0",
			Remotes: []registry.Transport{{
				Type: "streamable-http", URL: "https://{tenant}.tickets.example/mcp",
				Variables: map[string]registry.Input{"tenant": {Description: "Your tenant", IsRequired: true}},
				Headers: []registry.KeyValueInput{
					{Name: "Authorization", Input: registry.Input{Value: "Bearer {token}", IsRequired: true},
						Variables: map[string]registry.Input{"token": {Description: "An API token", IsRequired: true, IsSecret: true}}},
				},
			}},
		}, registry.StatusActive, true),
		Version(registry.Server{
			Schema: SchemaURL, Name: "io.example/gone", Description: "A server withdrawn by its publisher", Version: "1.0.0",
			Packages: []registry.Package{{RegistryType: registry.TypeNPM, Identifier: "mcp-gone", Version: "1.0.0", Transport: stdio}},
		}, registry.StatusDeleted, true),
		Version(registry.Server{
			Schema: SchemaURL, Name: "io.example/dotnet", Description: "A server published on NuGet only", Version: "0.3.0",
			Packages: []registry.Package{{RegistryType: registry.TypeNuGet, Identifier: "Example.Mcp", Version: "0.3.0", Transport: stdio}},
		}, registry.StatusActive, true),
	}
}

// Many returns n servers, one version each, as a registry of that size
// lists them: every fifth a remote one, the others npm packages.
func Many(n int) []registry.Response {
	out := make([]registry.Response, n)
	words := []string{"weather", "github", "files", "search", "calendar", "notes", "sql", "browser", "slack", "maps"}
	for i := range out {
		w := words[i%len(words)]
		s := registry.Server{
			Schema: SchemaURL, Name: fmt.Sprintf("io.example.n%d/%s-%d", i/100, w, i), Title: fmt.Sprintf("%s %d", w, i),
			Description: fmt.Sprintf("A %s server, number %d of the fixture", w, i), Version: fmt.Sprintf("1.%d.0", i%7),
		}
		if i%5 == 0 {
			s.Remotes = []registry.Transport{{Type: "streamable-http", URL: fmt.Sprintf("https://mcp%d.example.com/mcp", i)}}
		} else {
			s.Packages = []registry.Package{{RegistryType: registry.TypeNPM, Identifier: fmt.Sprintf("@example/%s-%d", w, i), Version: s.Version, Transport: registry.Transport{Type: "stdio"}}}
		}
		out[i] = Version(s, registry.StatusActive, true)
	}
	return out
}
