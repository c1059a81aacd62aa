// Package install turns one version of a server in the MCP Registry (its
// server.json) into a server entry of FreeCode's config: which registry to
// ask (the organization's managed registry.url fixes it), the version
// (never a deleted one, never an unpinned "latest"), how it runs on this
// machine, the values it needs, and its "registry" block. The CLI
// (freecode mcp install, update) and the sidecar (freecode/registry/*) both
// install through it; each answers the values its own way (Input).
//
// Secret values never reach the entry: it holds ${secret:NAME}, and the
// value waits in the Plan until the caller saves it in the secret store
// (Plan.SaveSecrets). The package writes no file and logs nothing.
package install

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/internal/termtext"
)

// Source says which registry to ask, below the organization's managed
// registry.url, which fixes it when set.
type Source struct {
	// Asked is a registry the user named for this one command (the CLI's
	// --registry): refused when the managed settings fix another.
	Asked string
	// Entry is the registry an installed server came from.
	Entry string
	// Configured returns the config's mcp.registry.url, or why the config
	// cannot be read (then no registry is asked: the public one is not
	// the user's, whose names another publisher may hold there); it is
	// called only when neither of the above names one. nil: none.
	Configured func() (string, error)
}

// RefusedError is a registry asked for (Source.Asked) that the managed
// settings do not let FreeCode ask.
type RefusedError struct {
	Asked string // the registry asked for
	Fixed string // the one the managed settings fix
	File  string // the managed file that fixes it
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: your organization's policy fixes the MCP Registry to %s (registry.url in %s)", termtext.Escape(e.Asked), e.Fixed, e.File)
}

// Client returns a client of the registry src leads to: the one the
// managed settings fix, else Asked, else Entry, else Configured's, else
// the public one. A managed policy that does not load refuses every
// registry, as it starts no server.
func Client(src Source) (*registry.Client, error) {
	m, err := config.LoadManaged()
	if err != nil {
		return nil, fmt.Errorf("the managed settings do not load, so no registry is asked: %w", err)
	}
	if fixed := m.Registry; fixed.URL != "" {
		if src.Asked != "" && strings.TrimRight(src.Asked, "/") != fixed.URL {
			return nil, &RefusedError{Asked: src.Asked, Fixed: fixed.URL, File: fixed.Path}
		}
		return registry.New(fixed.URL, nil)
	}
	u := cmp.Or(src.Asked, src.Entry)
	if u == "" && src.Configured != nil {
		var err error
		if u, err = src.Configured(); err != nil {
			return nil, fmt.Errorf("the config file does not load, so the MCP Registry it names (mcp.registry.url) is not known and none is asked: %w", err)
		}
	}
	return registry.New(cmp.Or(u, config.DefaultRegistryURL), nil)
}

// NotFoundError is a server, or a version of it, that the registry does
// not have.
type NotFoundError struct {
	Registry, Name string
	// Version is the version asked for: "latest" when none was.
	Version string
}

func (e *NotFoundError) Error() string {
	if e.Version == "latest" {
		return fmt.Sprintf("%s has no server %q", e.Registry, e.Name)
	}
	return fmt.Sprintf("%s has no version %s of %q", e.Registry, e.Version, e.Name)
}

func (e *NotFoundError) Unwrap() error { return registry.ErrNotFound }

// Get returns the version of name the registry behind c has ("latest" or
// "" its latest), refusing a deleted one or one with no concrete version.
// A deprecated one is returned: the caller says so (Response.Status,
// StatusMessage).
func Get(ctx context.Context, c *registry.Client, name, version string) (*registry.Response, error) {
	version = cmp.Or(version, "latest")
	r, err := c.Get(ctx, name, version)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, &NotFoundError{Registry: c.URL(), Name: name, Version: version}
	}
	if err != nil {
		return nil, err
	}
	s := &r.Server
	if r.Status() == registry.StatusDeleted {
		return nil, &DeletedError{Name: name, Version: s.Version}
	}
	if s.Version == "" || s.Version == "latest" {
		return nil, fmt.Errorf("the registry gave %q no concrete version: not installed", name)
	}
	return r, nil
}

// DeletedError is Get's refusal of a version its publisher deleted.
type DeletedError struct{ Name, Version string }

func (e *DeletedError) Error() string {
	return fmt.Sprintf("%s %s was deleted from the registry by its publisher: not installed", termtext.Escape(e.Name), termtext.Escape(e.Version))
}

// StatusMessage is the registry's message on a version's status (why it
// is deprecated), or "".
func StatusMessage(r *registry.Response) string {
	if r.Meta.Official != nil {
		return r.Meta.Official.StatusMessage
	}
	return ""
}

// EntryName is an entry's default name: the registry name's last part,
// made a valid server name.
func EntryName(name string) string {
	_, last, _ := strings.Cut(name, "/")
	last = regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(cmp.Or(last, name), "-")
	return strings.Trim(last, "-_")
}

// Value is one value an install asks for: a required argument,
// environment variable, header or URL variable that neither the server.json
// nor the caller fixes.
type Value struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Secret      bool     `json:"secret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// Input is where an install's values come from, each looked for in this
// order: Given, Plain, Kept, the server.json's fixed value, an optional
// one's default, and last Ask (or, with List, nowhere).
type Input struct {
	// Given are values by name, secret ones too: what a frontend asked
	// the user itself (the CLI's --values-stdin, the sidecar's
	// freecode/registry/install). An empty one counts as not given for
	// an optional value, and as its default for a required one.
	Given map[string]string
	// Plain are values given where a secret must not be (the CLI's --var:
	// a shell's history keeps the command line): a secret among them is a
	// *PlainSecretError.
	Plain map[string]string
	// Kept are an update's values of the version installed, as its entry
	// has them (a secret as its ${secret:NAME}), by environment variable,
	// header, argument or URL variable name: used before anything is
	// asked.
	Kept map[string]string
	// OldEnv and OldHeaders are an update's entry's: each is kept, those
	// the new version no longer names too, unless Plain gives another.
	OldEnv, OldHeaders map[string]string
	// List asks nothing: each value that would be asked is added to
	// Plan.Asked, and a stand-in takes its place in the entry, which is
	// not to be written.
	List bool
	// Stored returns the secret store's value of a secret name, and
	// whether it has one: a secret value is never kept under a name that
	// holds another value (another server's entry may use it), but as
	// ENTRY_NAME, or refused. nil: the store is not asked.
	Stored func(ctx context.Context, name string) (string, bool, error)
	// Ask answers a required value none of the above gives (a terminal's
	// prompt); its answer is checked as a Given one is. nil: such a value
	// is a *ValueError.
	Ask func(ctx context.Context, v Value) (string, error)
}

// ValueError is a value that was not given, with no Ask, or that cannot
// be taken: empty, or not one of its choices. It never holds a secret's
// value.
type ValueError struct {
	Name string // the value's
	msg  string
}

func (e *ValueError) Error() string { return e.msg }

func valueError(name, format string, args ...any) error {
	return &ValueError{Name: name, msg: fmt.Sprintf(format, args...)}
}

// PlainSecretError is a secret value given in Input.Plain.
type PlainSecretError struct{ Name string }

func (e *PlainSecretError) Error() string {
	return termtext.Escape(e.Name) + " is a secret: it is asked unseen and kept in the secret store, never taken in plain text"
}

// Plan is an entry built to install: the entry, how it runs, and the
// secret values to save before it is written.
type Plan struct {
	// Server is the entry, with its defaults and registry block.
	Server config.Server
	// Runs is how it runs: npm, pypi, oci or remote.
	Runs string
	// Package is what runs: the package as its runner names it
	// ("@scope/pkg@1.2.0", "pkg==1.2.0", the image), or the remote's URL
	// as the server.json writes it, its {variables} unfilled.
	Package string
	// Asked are the values that would be asked (Input.List), in the order
	// they would be.
	Asked []Value

	secrets map[string]string // secret name → value, saved by SaveSecrets
}

// Build builds the entry of base (its name set, and what an update keeps
// of the old entry) to run s, installed from the registry at registryURL:
// the way to run it picked (runs, if not "", says which), the values it
// needs taken from in, its registry block written, the organization's
// policy checked. Nothing is saved.
func Build(ctx context.Context, base config.Server, s *registry.Server, registryURL, runs string, in *Input) (*Plan, error) {
	if in == nil {
		in = &Input{}
	}
	b := &builder{in: in, entry: base.Name, secrets: map[string]string{}, asked: []Value{}}
	srv := base
	srv.Registry = &config.Registry{Name: s.Name, Version: s.Version, URL: registryURL}
	how, err := pickRun(s, runs)
	if err != nil {
		return nil, err
	}
	p := &Plan{}
	if how.pkg != nil {
		p.Runs = how.pkg.RegistryType
		p.Package, err = b.local(ctx, &srv, how.pkg)
	} else {
		p.Runs, p.Package = "remote", how.remote.URL
		err = b.remote(ctx, &srv, how.remote)
	}
	if err != nil {
		return nil, err
	}
	srv = srv.WithDefaults()
	m, err := config.LoadManaged()
	if err != nil {
		return nil, fmt.Errorf("server %q is blocked because your organization's managed settings cannot be read: %w\n(nothing was written)", srv.Name, err)
	}
	if why := m.Check(srv, os.LookupEnv); why != nil {
		return nil, fmt.Errorf("server %q is %s\n(nothing was written)", srv.Name, why)
	}
	p.Server, p.Asked, p.secrets = srv, b.asked, b.secrets
	return p, nil
}

// SecretNames are the secrets the plan keeps, sorted.
func (p *Plan) SecretNames() []string { return slices.Sorted(maps.Keys(p.secrets)) }

// SaveSecrets saves each secret value of the plan with set (the secret
// store's), in the order of SecretNames; call it before the entry is
// written, which names them. An error names the secret, and those saved
// before it, never a value.
func (p *Plan) SaveSecrets(ctx context.Context, set func(ctx context.Context, name, value string) error) error {
	names := p.SecretNames()
	for i, k := range names {
		if err := set(ctx, k, p.secrets[k]); err != nil {
			if i == 0 {
				return fmt.Errorf("saving secret %s: %w (nothing was written)", k, err)
			}
			return fmt.Errorf("saving secret %s: %w (no entry was written; %s %s saved in the secret store)", k, err,
				strings.Join(names[:i], ", "), map[bool]string{true: "was", false: "were"}[i == 1])
		}
	}
	return nil
}

// Unwritten is err, the entry's not being written after SaveSecrets,
// saying which secrets were saved all the same (for the person to use
// them again or remove them).
func (p *Plan) Unwritten(err error) error {
	names := p.SecretNames()
	if len(names) == 0 {
		return err
	}
	return fmt.Errorf("%w (the entry was not written, but the secrets %s were saved in the secret store: `freecode secret rm NAME` removes one)", err, strings.Join(names, ", "))
}

// builder gathers the values of one Build.
type builder struct {
	in      *Input
	entry   string // the entry's name, of which secret names are made
	asked   []Value
	secrets map[string]string
}

// text is a value going into the entry. lit is text a server.json or a
// person gave: literal wherever the entry expands references (env,
// headers, URL), so that a "${secret:GITHUB_TOKEN}" or "${env:HOME}" in
// it never hands the server another secret or the user's environment.
// The rest (the ${secret:NAME} the install makes, an update's kept value,
// a value composed already) is written as it is.
type text struct {
	s   string
	lit bool
}

// expanded joins pieces into a value of the entry's env, headers or URL:
// each "${env:" and "${secret:" that starts in a literal piece (alone, or
// with what follows it) escaped as "$${…}", which config.Expand reads as
// the literal text.
func expanded(pieces ...text) string {
	var full strings.Builder
	var lit []bool
	for _, p := range pieces {
		full.WriteString(p.s)
		for range len(p.s) {
			lit = append(lit, p.lit)
		}
	}
	s := full.String()
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if lit[i] && s[i] == '$' && (strings.HasPrefix(s[i:], "${env:") || strings.HasPrefix(s[i:], "${secret:")) {
			b.WriteByte('$')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// value returns the value of the input named name (see Input for where
// it is looked for); a secret one is kept to be saved as secretName,
// whose reference is returned. false for an optional one left empty.
func (b *builder) value(ctx context.Context, name, secretName string, i registry.Input) (text, bool, error) {
	in := b.in
	if v, ok := in.Given[name]; ok && (v != "" || i.IsRequired) {
		return b.answer(ctx, name, secretName, i, v)
	}
	if v, ok := in.Plain[name]; ok {
		if i.IsSecret {
			return text{}, false, &PlainSecretError{Name: name}
		}
		return text{v, true}, true, nil
	}
	if v, ok := in.Kept[name]; ok {
		return text{s: v}, true, nil
	}
	if i.Value != "" {
		// Filled by the caller (fill), literal parts escaped where the
		// entry expands.
		return text{s: i.Value}, true, nil
	}
	if !i.IsRequired {
		return text{i.Default, true}, i.Default != "", nil
	}
	q := Value{Name: name, Description: i.Description, Secret: i.IsSecret, Default: i.Default, Choices: i.Choices}
	if in.List {
		b.asked = append(b.asked, q)
		// A stand-in a URL or argument can hold: nothing is written.
		return text{cmp.Or(i.Default, append(slices.Clone(i.Choices), "value")[0]), true}, true, nil
	}
	if in.Ask == nil {
		return text{}, false, valueError(name, "%s is required: no value was given for it", termtext.Escape(name))
	}
	v, err := in.Ask(ctx, q)
	if err != nil {
		return text{}, false, err
	}
	return b.answer(ctx, name, secretName, i, v)
}

// answer checks the value v given for the input named name, and keeps a
// secret one to be saved as secretName, whose reference it returns.
func (b *builder) answer(ctx context.Context, name, secretName string, i registry.Input, v string) (text, bool, error) {
	v = cmp.Or(v, i.Default)
	if v == "" {
		return text{}, false, valueError(name, "%s is required: the value is empty", termtext.Escape(name))
	}
	if len(i.Choices) > 0 && !slices.Contains(i.Choices, v) {
		if i.IsSecret {
			return text{}, false, valueError(name, "%s: the value is not one of %s", termtext.Escape(name), termtext.Escape(strings.Join(i.Choices, ", ")))
		}
		return text{}, false, valueError(name, "%s: %q is not one of %s", termtext.Escape(name), v, termtext.Escape(strings.Join(i.Choices, ", ")))
	}
	if i.IsSecret {
		secretName, err := b.secretName(ctx, name, secretName, v)
		if err != nil {
			return text{}, false, err
		}
		b.secrets[secretName] = v
		return text{s: "${secret:" + secretName + "}"}, true, nil
	}
	return text{v, true}, true, nil
}

// secretName returns the name the secret value v of the input named name
// is kept as: want, unless the store (or this install) holds another
// value under it, then ENTRY_WANT. The server.json names it, and another
// server's entry may use it for its own value: replacing that would send
// this value to the other server. Both taken is a *ValueError, which
// names them, never a value.
func (b *builder) secretName(ctx context.Context, name, want, v string) (string, error) {
	names := []string{want, secretName(b.entry, want, want)}
	n, err := secretstore.Choose(ctx, names, v, func(ctx context.Context, n string) (string, bool, error) {
		if err := secretstore.ValidName(n); err != nil {
			return "", false, err
		}
		if held, ok := b.secrets[n]; ok {
			return held, true, nil
		}
		if b.in.Stored == nil {
			return "", false, nil
		}
		held, ok, err := b.in.Stored(ctx, n)
		if err != nil {
			return "", false, fmt.Errorf("reading secret %s: %w", n, err)
		}
		return held, ok, nil
	})
	if err != nil || n != "" {
		return n, err
	}
	return "", valueError(name, "%s: the secrets %s hold other values already, which are not replaced (another server may use them): remove the one no server uses (`freecode secret rm NAME`), or install under another entry name",
		termtext.Escape(name), strings.Join(names, " and "))
}
