// Package registry is a client of the MCP Registry's API
// (github.com/modelcontextprotocol/registry, docs/reference/api/openapi.yaml):
// the servers it lists, their versions and server.json, and an index of
// the latest versions kept in the user's cache directory so that a search
// is answered locally.
//
// Every URL it dials passes internal/urlpolicy: https, or http to loopback,
// checked on the text and again on the address dialled and every redirect.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/freecode/freecode/internal/urlpolicy"
)

// Server is a server.json: what a publisher says of one version of a
// server (the registry's ServerDetail). Only the fields FreeCode uses are
// typed; the rest is dropped.
type Server struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where a server's source is.
type Repository struct {
	URL       string `json:"url"`
	Source    string `json:"source"`
	Subfolder string `json:"subfolder,omitempty"`
}

// The package types a server.json names (Package.RegistryType).
const (
	TypeNPM   = "npm"
	TypePyPI  = "pypi"
	TypeOCI   = "oci"
	TypeNuGet = "nuget"
	TypeMCPB  = "mcpb"
)

// Package is one way to run a server locally.
type Package struct {
	RegistryType         string          `json:"registryType"`
	RegistryBaseURL      string          `json:"registryBaseUrl,omitempty"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version,omitempty"`
	FileSha256           string          `json:"fileSha256,omitempty"`
	RuntimeHint          string          `json:"runtimeHint,omitempty"`
	Transport            Transport       `json:"transport"`
	RuntimeArguments     []Argument      `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument      `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValueInput `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport or a remote: "stdio",
// "streamable-http" or "sse", with a URL template and headers for the
// last two, and a remote's variables of its URL.
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValueInput  `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value the user may be asked for.
type Input struct {
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	Format      string   `json:"format,omitempty"`
	Value       string   `json:"value,omitempty"`
	IsSecret    bool     `json:"isSecret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// KeyValueInput is an environment variable or a header.
type KeyValueInput struct {
	Input
	Name      string           `json:"name"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Argument is a positional ("positional") or named ("named", Name being
// the flag) command-line argument.
type Argument struct {
	Input
	Type       string           `json:"type"`
	Name       string           `json:"name,omitempty"`
	ValueHint  string           `json:"valueHint,omitempty"`
	IsRepeated bool             `json:"isRepeated,omitempty"`
	Variables  map[string]Input `json:"variables,omitempty"`
}

// The lifecycle of a version (Official.Status).
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusDeleted    = "deleted"
)

// OfficialKey is the _meta key of the registry's own metadata.
const OfficialKey = "io.modelcontextprotocol.registry/official"

// Official is what the registry says of a version.
type Official struct {
	Status        string    `json:"status,omitempty"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	PublishedAt   time.Time `json:"publishedAt,omitzero"`
	UpdatedAt     time.Time `json:"updatedAt,omitzero"`
	IsLatest      bool      `json:"isLatest"`
}

// Response is one version as the API answers it (ServerResponse).
type Response struct {
	Server Server `json:"server"`
	Meta   Meta   `json:"_meta,omitzero"`
}

// Meta is a Response's _meta.
type Meta struct {
	Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
}

// Status returns the version's status, StatusActive when the registry
// says none.
func (r *Response) Status() string {
	if r.Meta.Official == nil || r.Meta.Official.Status == "" {
		return StatusActive
	}
	return r.Meta.Official.Status
}

// List is a page of servers (ServerList).
type List struct {
	Servers  []Response   `json:"servers"`
	Metadata ListMetadata `json:"metadata,omitzero"`
}

// ListMetadata says where the next page starts.
type ListMetadata struct {
	NextCursor string `json:"nextCursor,omitempty"`
	Count      int    `json:"count,omitempty"`
}

// ErrNotFound is the registry's 404: no such server, or version.
var ErrNotFound = errors.New("not found in the registry")

// Client asks one registry.
type Client struct {
	base     *url.URL
	http     *http.Client
	cacheDir string
	maxAge   time.Duration
	now      func() time.Time
}

// Options are a Client's settings; nil means the defaults.
type Options struct {
	// CacheDir holds the search index; "" is <user cache dir>/freecode/registry.
	CacheDir string
	// MaxAge is how long the index is used before it is fetched again;
	// 0 is an hour.
	MaxAge time.Duration
}

// New returns a client of the registry at baseURL, which must be https or
// http to loopback.
func New(baseURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("registry URL: %w", err)
	}
	if err := urlpolicy.Check(u); err != nil {
		return nil, fmt.Errorf("registry URL: %w", err)
	}
	if opts == nil {
		opts = &Options{}
	}
	c := &Client{base: u, cacheDir: opts.CacheDir, maxAge: opts.MaxAge, now: time.Now}
	if c.maxAge == 0 {
		c.maxAge = time.Hour
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, Control: urlpolicy.Control(u.Scheme == "http")}
	c.http = &http.Client{
		Timeout:       time.Minute,
		CheckRedirect: urlpolicy.CheckRedirect,
		Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         dialer.DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 4,
		},
	}
	return c, nil
}

// URL returns the registry's base URL.
func (c *Client) URL() string { return c.base.String() }

// ListOptions narrow List.
type ListOptions struct {
	Search         string // a substring of the name
	Cursor         string // metadata.nextCursor of the page before
	Limit          int    // 0: the registry's default
	Version        string // "latest" or an exact version; "" every version
	IncludeDeleted bool
}

// List returns one page of servers.
func (c *Client) List(ctx context.Context, o ListOptions) (*List, error) {
	q := url.Values{}
	if o.Search != "" {
		q.Set("search", o.Search)
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Version != "" {
		q.Set("version", o.Version)
	}
	if o.IncludeDeleted {
		q.Set("include_deleted", "true")
	}
	var l List
	if err := c.get(ctx, "/v0.1/servers", q, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// Search returns one page of the latest versions of the servers whose
// name holds query, as the registry searches.
func (c *Client) Search(ctx context.Context, query, cursor string, limit int) (*List, error) {
	return c.List(ctx, ListOptions{Search: query, Cursor: cursor, Limit: limit, Version: "latest"})
}

// Versions returns every version of the server name, newest first,
// deleted ones included.
func (c *Client) Versions(ctx context.Context, name string) ([]Response, error) {
	var l List
	q := url.Values{"include_deleted": {"true"}}
	if err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions", q, &l); err != nil {
		return nil, err
	}
	return l.Servers, nil
}

// Get returns one version of the server name, or its latest for
// "latest"; a deleted version too, which the caller refuses.
func (c *Client) Get(ctx context.Context, name, version string) (*Response, error) {
	var r Response
	q := url.Values{"include_deleted": {"true"}}
	if err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// maxBody bounds one answer: a page of 100 server.json is far below.
const maxBody = 32 << 20

func (c *Client) get(ctx context.Context, path string, q url.Values, v any) error {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("asking the registry: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("reading the registry's answer: %w", err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("the registry's answer to %s is over %d MiB", path, maxBody>>20)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode != http.StatusOK:
		var e struct {
			Error  string `json:"error"`
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(body, &e)
		return fmt.Errorf("the registry answered %s: %s", resp.Status, strings.TrimSpace(e.Error+" "+e.Detail))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the registry's answer to %s: %w", path, err)
	}
	return nil
}
