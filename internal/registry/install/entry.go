package install

// Building a server entry from a registry's server.json: which way it runs
// on this machine (pickRun), and the entry of a package (local) or of a
// remote (remote), their values filled in (builder.value).

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/internal/termtext"
)

type runChoice struct {
	pkg    *registry.Package
	remote *registry.Transport
}

// pickRun chooses how to run s: the kind asked for, else the first of an
// npm, PyPI or OCI package whose runner is on PATH, else a remote.
func pickRun(s *registry.Server, want string) (runChoice, error) {
	runner := map[string]string{registry.TypeNPM: "npx", registry.TypePyPI: "uvx", registry.TypeOCI: "docker"}
	var kinds []string
	for _, kind := range []string{registry.TypeNPM, registry.TypePyPI, registry.TypeOCI} {
		for i := range s.Packages {
			p := &s.Packages[i]
			if p.RegistryType != kind || p.Transport.Type != "stdio" {
				continue
			}
			kinds = append(kinds, kind)
			if want == kind || want == "" && onPath(runner[kind]) {
				return runChoice{pkg: p}, nil
			}
		}
	}
	for i := range s.Remotes {
		t := &s.Remotes[i]
		if t.Type != "streamable-http" && t.Type != "sse" {
			continue
		}
		kinds = append(kinds, "remote")
		if want == "" || want == "remote" {
			return runChoice{remote: t}, nil
		}
	}
	if want == "" && len(kinds) > 0 {
		// None's runner is on PATH: write the first all the same, and the
		// server's start says what is missing.
		for i := range s.Packages {
			if p := &s.Packages[i]; p.RegistryType == kinds[0] {
				return runChoice{pkg: p}, nil
			}
		}
	}
	offered := registry.Runs(s)
	if want != "" {
		return runChoice{}, fmt.Errorf("%s offers no %s way to run it (it offers: %s)", termtext.Escape(s.Name), termtext.Escape(want), termtext.Escape(strings.Join(offered, ", ")))
	}
	return runChoice{}, fmt.Errorf("%s can run only as %s, which FreeCode does not install yet (npm, pypi, oci and remote servers)", termtext.Escape(s.Name), termtext.Escape(strings.Join(offered, ", ")))
}

func onPath(prog string) bool {
	_, err := exec.LookPath(prog)
	return err == nil
}

// keptValue returns the value an update keeps of name in old, unless
// Plain gives another.
func (b *builder) keptValue(old map[string]string, name string) (string, bool) {
	if _, ok := b.in.Plain[name]; ok {
		return "", false
	}
	v, ok := old[name]
	return v, ok
}

// keepRest adds to m what old has that m does not: the variables and
// headers the user added to the entry, or the new version no longer names.
func keepRest(m, old map[string]string) map[string]string {
	for k, v := range old {
		if _, ok := m[k]; !ok {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = v
		}
	}
	return m
}

// varRef is a {var} of a server.json's template.
var varRef = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// fill replaces each {var} of template with its variable's value; a
// variable the template does not define stays as written. With expands
// (the value is an env value, a header or the URL, which the entry
// expands) the template's text and the values given are literal
// (expanded); a command's arguments are not expanded, and kept as given.
func (b *builder) fill(ctx context.Context, template, owner string, vars map[string]registry.Input, expands bool) (string, error) {
	var pieces []text
	last := 0
	for _, m := range varRef.FindAllStringSubmatchIndex(template, -1) {
		i, ok := vars[template[m[2]:m[3]]]
		if !ok {
			continue
		}
		pieces = append(pieces, text{template[last:m[0]], true})
		k := template[m[2]:m[3]]
		if i.IsSecret && !expands {
			// A command's argument is not expanded: its ${secret:NAME}
			// would reach the server as written, the secret saved for
			// nothing.
			return "", fmt.Errorf("%s of argument %s is a secret, which FreeCode cannot pass on a command line yet (commands are not expanded): not installed", termtext.Escape(k), termtext.Escape(owner))
		}
		v, _, err := b.value(ctx, k, secretName(b.entry, owner, k), i)
		if err != nil {
			return "", err
		}
		pieces = append(pieces, v)
		last = m[1]
	}
	pieces = append(pieces, text{template[last:], true})
	if expands {
		return expanded(pieces...), nil
	}
	var out strings.Builder
	for _, p := range pieces {
		out.WriteString(p.s)
	}
	return out.String(), nil
}

// secretName is the secret a value is kept as: the environment variable's
// own name, else ENTRY_VARIABLE in capitals.
func secretName(entry, owner, variable string) string {
	if variable == "" {
		return owner
	}
	return secretstore.ScopedName(entry, variable)
}

// local fills srv from the package p, and returns the package's reference
// as its runner is given it.
func (b *builder) local(ctx context.Context, srv *config.Server, p *registry.Package) (string, error) {
	srv.Type = config.TypeLocal
	args := func(list []registry.Argument) ([]string, error) {
		var out []string
		for _, a := range list {
			label := cmp.Or(a.ValueHint, strings.TrimLeft(a.Name, "-"))
			i := a.Input
			if i.Value != "" {
				v, err := b.fill(ctx, i.Value, label, a.Variables, false)
				if err != nil {
					return nil, err
				}
				i.Value = v
			}
			if i.IsSecret {
				return nil, fmt.Errorf("argument %s is a secret, which FreeCode cannot pass on a command line yet (commands are not expanded): not installed", termtext.Escape(label))
			}
			v, ok, err := b.value(ctx, label, "", i)
			if err != nil {
				return nil, err
			}
			switch {
			case a.Type == "named" && ok:
				out = append(out, a.Name, v.s)
			case a.Type == "named" && i.Format == "boolean":
			case ok:
				out = append(out, v.s)
			}
		}
		return out, nil
	}
	rt, err := args(p.RuntimeArguments)
	if err != nil {
		return "", err
	}
	pa, err := args(p.PackageArguments)
	if err != nil {
		return "", err
	}
	env := map[string]string{}
	for _, e := range p.EnvironmentVariables {
		if v, ok := b.keptValue(b.in.OldEnv, e.Name); ok {
			env[e.Name] = v
			continue
		}
		i := e.Input
		if i.Value != "" {
			v, err := b.fill(ctx, i.Value, e.Name, e.Variables, true)
			if err != nil {
				return "", err
			}
			i.Value = v
		}
		v, ok, err := b.value(ctx, e.Name, e.Name, i)
		if err != nil {
			return "", err
		}
		if ok {
			env[e.Name] = expanded(v)
		}
	}
	env = keepRest(env, b.in.OldEnv)
	if len(env) > 0 {
		srv.Env = env
	}
	version := p.Version
	if version == "" || version == "latest" {
		version = srv.Registry.Version
	}
	var ref string
	switch p.RegistryType {
	case registry.TypeNPM:
		ref = p.Identifier + "@" + version
		srv.Command = slices.Concat([]string{"npx", "-y"}, rt, []string{ref}, pa)
	case registry.TypePyPI:
		ref = p.Identifier + "==" + version
		srv.Command = slices.Concat([]string{"uvx"}, rt, []string{ref}, pa)
	case registry.TypeOCI:
		image, digest, err := pinnedImage(p.Identifier, p.Version)
		if err != nil {
			return "", err
		}
		ref = image
		srv.Registry.Digest = digest
		var envArgs []string
		for _, k := range slices.Sorted(maps.Keys(env)) {
			envArgs = append(envArgs, "-e", k)
		}
		srv.Command = slices.Concat([]string{"docker", "run", "-i", "--rm"}, rt, envArgs, []string{image}, pa)
	default:
		return "", fmt.Errorf("a %s package is not installed by FreeCode yet", termtext.Escape(p.RegistryType))
	}
	if p.FileSha256 != "" && srv.Registry.Digest == "" {
		srv.Registry.Digest = "sha256:" + p.FileSha256
	}
	return ref, nil
}

// pinnedImage returns the image reference docker runs: by digest when the
// identifier has one (the tag dropped: the digest decides), else by its
// tag, or the package's version as the tag; never an unpinned "latest".
func pinnedImage(identifier, version string) (image, digest string, err error) {
	ref, dig, hasDigest := strings.Cut(identifier, "@")
	if hasDigest {
		repo := ref
		if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
			repo = ref[:i]
		}
		return repo + "@" + dig, dig, nil
	}
	tag := ""
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		tag = ref[i+1:]
		ref = ref[:i]
	}
	tag = cmp.Or(tag, version)
	if tag == "" || tag == "latest" {
		return "", "", fmt.Errorf("image %s names no digest and no version but %q: not installed unpinned", termtext.Escape(identifier), cmp.Or(tag, "latest"))
	}
	return ref + ":" + tag, "", nil
}

// remote fills srv from the remote t.
func (b *builder) remote(ctx context.Context, srv *config.Server, t *registry.Transport) error {
	srv.Type = config.TypeRemote
	srv.Transport = config.TransportHTTP
	if t.Type == "sse" {
		srv.Transport = config.TransportSSE
	}
	u, err := b.fill(ctx, t.URL, "url", t.Variables, true)
	if err != nil {
		return err
	}
	if err := config.CheckURL(u); err != nil {
		return fmt.Errorf("the server's URL %s: %w", termtext.Escape(u), err)
	}
	srv.URL = u
	for _, h := range t.Headers {
		if v, ok := b.keptValue(b.in.OldHeaders, h.Name); ok {
			if srv.Headers == nil {
				srv.Headers = map[string]string{}
			}
			srv.Headers[h.Name] = v
			continue
		}
		i := h.Input
		if i.Value != "" {
			v, err := b.fill(ctx, i.Value, h.Name, h.Variables, true)
			if err != nil {
				return err
			}
			i.Value = v
		}
		v, ok, err := b.value(ctx, h.Name, secretName(srv.Name, "", h.Name), i)
		if err != nil {
			return err
		}
		if ok {
			if srv.Headers == nil {
				srv.Headers = map[string]string{}
			}
			srv.Headers[h.Name] = expanded(v)
		}
	}
	srv.Headers = keepRest(srv.Headers, b.in.OldHeaders)
	return nil
}
