package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/registry/install"
	"github.com/freecode/freecode/server/wire"
	"github.com/freecode/freecode/workspace"
)

// The MCP Registry through the sidecar (freecode/registry/*): what `freecode
// mcp search` and `install` do, for a frontend that asks the values itself
// (the page's Install dialog). The install itself is internal/registry/install's,
// the CLI's too; the entry written is picked up by the config watcher as
// any edit of the file is.

// registryClient returns a client of the registry the sidecar asks: the
// one the managed settings fix, else the config's mcp.registry.url, else
// the public one, as the CLI does.
func registryClient(w *workspace.Workspace) (*registry.Client, error) {
	return install.Client(install.Source{Configured: func() (string, error) {
		cfg, err := config.Load(w.Project().ConfigPath)
		if err != nil {
			return "", err
		}
		return cfg.MCP.RegistryURL, nil
	}})
}

// registrySearch is freecode/registry/search.
func (sess *session) registrySearch(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.RegistrySearchParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Limit < 0 {
		return nil, invalidParams("limit", "want 0 (all) or more, got %d", p.Limit)
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	c, err := registryClient(w)
	if err != nil {
		return nil, err
	}
	ix, err := c.Index(ctx, p.Refresh)
	if err != nil {
		return nil, err
	}
	found := ix.Search(p.Query)
	res := &protocol.RegistrySearchResult{Registry: c.URL(), Total: len(found), Entries: []protocol.RegistryEntry{}}
	if p.Limit > 0 && len(found) > p.Limit {
		found = found[:p.Limit]
	}
	for _, e := range found {
		res.Entries = append(res.Entries, wire.RegistryEntry(e))
	}
	return res, nil
}

// registryVersion returns the version of name a request asks for, from
// the registry the sidecar asks: one it does not have is the request's
// error.
func registryVersion(ctx context.Context, w *workspace.Workspace, name, version string) (*registry.Client, *registry.Response, error) {
	if name == "" {
		return nil, nil, required("name")
	}
	c, err := registryClient(w)
	if err != nil {
		return nil, nil, err
	}
	r, err := install.Get(ctx, c, name, version)
	if nf := (*install.NotFoundError)(nil); errors.As(err, &nf) {
		if nf.Version == "latest" {
			return nil, nil, invalidParams("name", "%v", err)
		}
		return nil, nil, invalidParams("version", "%v", err)
	}
	if de := (*install.DeletedError)(nil); errors.As(err, &de) {
		return nil, nil, invalidParams("version", "%v", err)
	}
	return c, r, err
}

// registryValues is freecode/registry/values: what installing a version
// would ask, and how it would run. Nothing is written.
func (sess *session) registryValues(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.RegistryValuesParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	c, r, err := registryVersion(ctx, w, p.Name, p.Version)
	if err != nil {
		return nil, err
	}
	s := &r.Server
	entry := install.EntryName(s.Name)
	plan, err := install.Build(ctx, config.Server{Name: entry, Enabled: true}, s, c.URL(), p.Runs, &install.Input{List: true})
	if err != nil {
		return nil, err
	}
	res := &protocol.RegistryValuesResult{
		Registry: c.URL(), Name: s.Name, Title: s.Title, Description: s.Description, Version: s.Version,
		Runs: plan.Runs, Package: plan.Package, Offered: append([]string{}, registry.Runs(s)...), EntryName: entry,
		Values: []protocol.RegistryValue{}, ProjectScope: projectScope(w) == nil,
	}
	if st := r.Status(); st != registry.StatusActive {
		res.Status, res.StatusMessage = st, install.StatusMessage(r)
	}
	for _, v := range plan.Asked {
		res.Values = append(res.Values, wire.RegistryValue(v))
	}
	return res, nil
}

// projectScope says why an install may not write the project's settings,
// or nil: only a trusted project's, whose servers then await approval.
func projectScope(w *workspace.Workspace) error {
	proj := w.Project()
	switch {
	case proj.Root == "":
		return errors.New("the sidecar has no project: the entry can go to the user's config only")
	case !proj.Trusted:
		return errors.New("the project is not trusted: the entry can go to the user's config only (trust the project to install into its settings)")
	}
	return nil
}

// registryInstall is freecode/registry/install: the secret values kept in
// the secret store, then one entry added to the user's config or the
// trusted project's settings. The values are logged by name only, and
// --trace shows them as *** (maskSecrets).
func (sess *session) registryInstall(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.RegistryInstallParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	proj := w.Project()
	scope := cmp.Or(p.Scope, protocol.ServerScopeUser)
	var path string
	switch scope {
	case protocol.ServerScopeUser:
		path = proj.ConfigPath
	case protocol.ServerScopeProject:
		if err := projectScope(w); err != nil {
			return nil, invalidParams("scope", "%v", err)
		}
		path = config.ProjectSettingsPath(proj.Root)
	default:
		return nil, invalidParams("scope", "want user or project, got %q", p.Scope)
	}
	c, r, err := registryVersion(ctx, w, p.Name, p.Version)
	if err != nil {
		return nil, err
	}
	s := &r.Server
	name := cmp.Or(p.EntryName, install.EntryName(s.Name))
	if err := config.CheckName(name); err != nil {
		return nil, invalidParams("entryName", "%v", err)
	}
	// Before a secret is saved: a taken name would leave it saved for
	// nothing, or replace one another server uses.
	if taken, err := entryTaken(path, scope, proj.Root, name); err != nil {
		return nil, err
	} else if taken {
		return nil, invalidParams("entryName", "%s already has a server named %q: give the entry another name", path, name)
	}
	plan, err := install.Build(ctx, config.Server{Name: name, Enabled: true}, s, c.URL(), p.Runs, &install.Input{Given: p.Values, Stored: w.StoredSecret})
	if ve := (*install.ValueError)(nil); errors.As(err, &ve) {
		return nil, invalidParams("values", "%v", err)
	}
	if err != nil {
		return nil, err
	}
	sess.logger.Info("registry/install", "server", s.Name, "version", s.Version, "entry", name, "scope", scope, "secrets", plan.SecretNames())
	where := ""
	err = plan.SaveSecrets(ctx, func(ctx context.Context, k, v string) error {
		var err error
		where, _, err = w.SetSecret(ctx, k, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	if scope == protocol.ServerScopeProject {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, plan.Unwritten(err)
		}
	}
	srv := plan.Server
	if err := config.AddServer(path, srv); err != nil {
		return nil, plan.Unwritten(err)
	}
	return &protocol.RegistryInstallResult{
		Name: srv.Name, Scope: scope, Type: protocol.ServerType(srv.Type), File: path,
		Registry: *wire.RegistryIdentity(srv.Registry), Secrets: len(plan.SecretNames()), SecretsWhere: where,
	}, nil
}

// entryTaken says whether the file at path (of scope) has a server named
// name.
func entryTaken(path string, scope protocol.ServerScope, root, name string) (bool, error) {
	var servers []config.Server
	if scope == protocol.ServerScopeProject {
		list, err := config.LoadProject(root)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("the project's settings: %w", err)
		}
		servers = list
	} else {
		cfg, err := config.Load(path)
		if err != nil {
			return false, err
		}
		servers = cfg.MCP.Servers
	}
	return slices.ContainsFunc(servers, func(s config.Server) bool { return s.Name == name }), nil
}
