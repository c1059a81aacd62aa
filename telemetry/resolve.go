package telemetry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/secretstore"
)

// Where the export's settings come from, key by key, the first that has
// it: the managed settings' "telemetry" block (config.ManagedTelemetry),
// the user's config file's mcp.telemetry (config.Telemetry), the
// process's OTEL_* variables. A block's "enabled" turns the export on or
// off; a block without it says nothing but "arguments". A project's file
// is none of these (config refuses its telemetry keys).

// The protocols of Settings: ProtocolHTTP (the default) and ProtocolGRPC.
const (
	ProtocolHTTP = config.TelemetryProtocol
	ProtocolGRPC = config.TelemetryProtocolGRPC
)

// The sources Settings.Source names.
const (
	SourceManaged     = "managed settings"
	SourceEnvironment = "environment"
)

// sourceUser is Settings.Source for the user's config file at path.
func sourceUser(path string) string {
	if path == "" {
		return "your config file"
	}
	return "your config file " + path
}

// SourceText is Source as a sentence says it: "the managed settings",
// "your OTEL_* variables", "your config file /home/me/.freecode/config.json".
func (s Settings) SourceText() string {
	switch s.Source {
	case SourceManaged:
		return "the managed settings"
	case SourceEnvironment:
		return "your OTEL_* variables"
	}
	return s.Source
}

// block is a telemetry block as Resolve reads it: the managed one or the
// user's, with its source.
type block struct {
	source             string
	enabled, arguments *bool
	endpoint, protocol string
	headers            map[string]string
}

// Resolve decides the export from the managed policy m (nil: none) and
// the process's environment (getenv, os.Getenv in the commands), without
// a user's block: ResolveUser with none.
func Resolve(m *config.Managed, getenv func(string) string) (Settings, error) {
	return ResolveUser(m, nil, "", getenv)
}

// ResolveUser decides the export from the managed policy m (nil: none),
// the user's block u of the config file at path (nil: none) and the
// process's environment (getenv). The managed block's "enabled" wins over
// the user's, which wins over the environment, either way; so do their
// endpoints and protocols, and their "arguments" (the managed one whether
// or not it sets "enabled"), except that the managed endpoint gets
// arguments only when the managed block asks for them. Headers go with the endpoint of their block:
// a block's endpoint gets that block's, the managed endpoint none of the
// user's (an empty set in place of OTEL_EXPORTER_OTLP_HEADERS), the
// environment's endpoint the first block's. The error says what was refused
// (a protocol FreeCode does not speak, an endpoint that is no URL); the
// settings are then off. Headers are as written: FromConfig resolves
// their ${env:} and ${secret:} references.
func ResolveUser(m *config.Managed, u *config.Telemetry, path string, getenv func(string) string) (Settings, error) {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	var blocks []block // those that set "enabled", in order of precedence
	var args []block   // those that set "arguments"
	if m != nil {
		mt := m.Telemetry
		b := block{source: SourceManaged, enabled: mt.Enabled, arguments: mt.Arguments, endpoint: mt.Endpoint,
			protocol: mt.Protocol, headers: mt.Headers}
		if mt.Enabled != nil {
			blocks = append(blocks, b)
		}
		if mt.Arguments != nil {
			args = append(args, b)
		}
	}
	if u != nil {
		b := block{source: sourceUser(path), enabled: u.Enabled, arguments: u.Arguments, endpoint: u.Endpoint,
			protocol: u.Protocol, headers: u.Headers}
		if u.Enabled != nil {
			blocks = append(blocks, b)
		}
		if u.Arguments != nil {
			args = append(args, b)
		}
	}
	off := func(err error) (Settings, error) { return Settings{Off: err.Error()}, err }

	var s Settings
	if len(blocks) > 0 {
		s.Source = blocks[0].source
		if !*blocks[0].enabled {
			return Settings{Source: s.Source, Off: "turned off by " + s.SourceText()}, nil
		}
	} else {
		s.Source = SourceEnvironment
		if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
			return Settings{Source: SourceEnvironment, Off: "OTEL_SDK_DISABLED is true"}, nil
		}
	}
	if len(args) > 0 && *args[0].arguments {
		s.Arguments, s.ArgumentsFrom = true, args[0].source
	}
	// The first block with a protocol; the first with an endpoint takes
	// all three signals.
	protocol := ""
	for _, b := range blocks {
		if protocol == "" {
			protocol = b.protocol
		}
	}
	for _, b := range blocks {
		if b.endpoint == "" {
			continue
		}
		// Credentials go only where the one who wrote them sends them:
		// the headers of the endpoint's own block; with none, the
		// organization's endpoint gets none of the user's (neither a
		// later block's nor OTEL_EXPORTER_OTLP_HEADERS: an empty set in
		// their place), the user's the variable's.
		switch {
		case b.headers != nil:
			s.Headers = b.headers
		case b.source == SourceManaged:
			s.Headers = map[string]string{}
		}
		for _, sig := range s.signals() {
			// The endpoint's own block's protocol, else a block's; the
			// organization's endpoint is never spoken to as a user's
			// variable says (http/protobuf), the user's as it says.
			p := cmpOr(b.protocol, protocol)
			if p == "" && b.source == SourceManaged {
				p = ProtocolHTTP
			}
			if p == "" {
				var err error
				if p, err = envProtocol(env, sig.upper); err != nil {
					return off(err)
				}
			}
			*sig.url, *sig.protocol = endpointFor(b.endpoint, p, sig.path), p
		}
		// Likewise the arguments: the user's "arguments": true was given
		// for where the user sends them, not for the organization's
		// collector, which gets them only if its own block asks.
		if b.source == SourceManaged && s.ArgumentsFrom != SourceManaged {
			s.Arguments, s.ArgumentsFrom = false, ""
		}
		return s, nil
	}
	// The environment's endpoint: a block that names none sends its
	// headers there (the first that has them).
	for _, b := range blocks {
		if b.headers != nil {
			s.Headers = b.headers
			break
		}
	}
	// The endpoints of the environment, signal by signal; with a block on,
	// the OTEL_*_EXPORTER variables are not read.
	for _, sig := range s.signals() {
		if len(blocks) == 0 && !exporterOTLP(env("OTEL_"+sig.upper+"_EXPORTER")) {
			continue
		}
		p := protocol
		if p == "" {
			var err error
			if p, err = envProtocol(env, sig.upper); err != nil {
				return off(err)
			}
		}
		u, err := envURL(env, sig.upper, sig.path, p)
		if err != nil {
			return off(err)
		}
		if u != "" {
			*sig.url, *sig.protocol = u, p
		}
	}
	if !s.Enabled() {
		if len(blocks) > 0 {
			s.Off = "turned on by " + s.SourceText() + ", but no endpoint is named there and OTEL_EXPORTER_OTLP_ENDPOINT is not set"
			return s, errors.New(s.Off)
		}
		s.Off = "no OTEL_EXPORTER_OTLP_ENDPOINT in the environment, and neither your config file's mcp.telemetry nor the managed settings turn it on"
	}
	return s, nil
}

// signal is one signal's fields of Settings.
type signal struct {
	name, upper, path string
	url, protocol     *string
}

func (s *Settings) signals() []signal {
	return []signal{
		{"traces", "TRACES", "traces", &s.TracesURL, &s.TracesProtocol},
		{"metrics", "METRICS", "metrics", &s.MetricsURL, &s.MetricsProtocol},
		{"logs", "LOGS", "logs", &s.LogsURL, &s.LogsProtocol},
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// endpointFor is a base endpoint's URL for a signal: v1/<signal> added
// for OTLP/HTTP; for gRPC the endpoint as it is.
func endpointFor(base, protocol, path string) string {
	if protocol == ProtocolGRPC {
		return base
	}
	return signalURL(base, path)
}

// envProtocol is a signal's protocol as the variables say:
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else ProtocolHTTP.
func envProtocol(env func(string) string, upper string) (string, error) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + upper + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		switch p := env(k); p {
		case "":
			continue
		case ProtocolHTTP, ProtocolGRPC:
			return p, nil
		default:
			return "", fmt.Errorf("%s=%s: FreeCode exports OTLP over %s or %s (set one of them)", k, p, ProtocolHTTP, ProtocolGRPC)
		}
	}
	return ProtocolHTTP, nil
}

// exporterOTLP reports whether OTEL_{TRACES,METRICS,LOGS}_EXPORTER, v, asks
// for OTLP: unset (the default), or a list that names otlp.
func exporterOTLP(v string) bool {
	if v == "" {
		return true
	}
	for e := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(e) == "otlp" {
			return true
		}
	}
	return false
}

// envURL is a signal's endpoint as the OTLP exporter specification reads
// the variables: the signal's own endpoint as it is, else the common one,
// with v1/<signal> added for OTLP/HTTP; "" when neither is set.
func envURL(env func(string) string, upper, path, protocol string) (string, error) {
	k := "OTEL_EXPORTER_OTLP_" + upper + "_ENDPOINT"
	u := env(k)
	if u == "" {
		k = "OTEL_EXPORTER_OTLP_ENDPOINT"
		if u = env(k); u == "" {
			return "", nil
		}
		u = endpointFor(u, protocol, path)
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("%s is not an http or https URL", k)
	}
	return u, nil
}

// signalURL adds v1/<signal> to a base endpoint.
func signalURL(base, signal string) string {
	// The path goes before a query or fragment the base URL has.
	rest := ""
	if i := strings.IndexAny(base, "?#"); i >= 0 {
		base, rest = base[:i], base[i:]
	}
	return strings.TrimRight(base, "/") + "/v1/" + signal + rest
}

// ExpandHeaders returns s with the ${env:NAME} and ${secret:NAME}
// references of its headers' values resolved by lookup (config.Expand's
// lookup: NAME for a variable, config.SecretPrefix+NAME for a secret).
// The error names the header and what is missing, never a value.
func (s Settings) ExpandHeaders(lookup func(string) (string, bool)) (Settings, error) {
	if s.Headers == nil {
		return s, nil
	}
	h := make(map[string]string, len(s.Headers))
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		v, err := config.Expand(s.Headers[k], lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("telemetry header %s: %w", k, err))
		}
		h[k] = v
	}
	s.Headers = h
	return s, errors.Join(errs...)
}

// secretWait bounds one secret's lookup: a keychain waiting on an unlock
// prompt nobody sees must not hold a start for long.
const secretWait = 20 * time.Second

// userSecret reads the secret name from the user's store (~/.freecode/auth,
// or the keychain): false when it is not set or cannot be read.
func userSecret(name string) (string, bool) {
	dir, err := config.SecretsDir()
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), secretWait)
	defer cancel()
	v, err := secretstore.Open(dir).Get(ctx, name)
	return v, err == nil && v != ""
}

// ResolveConfig is ResolveUser of the user's block read from the config
// file at path (config.LoadTelemetry: whatever else the file holds, so a
// server entry's problem does not drop an "enabled": false). A block
// that cannot be read (a file that is not JSON, a block's bad value) may
// be what turns telemetry off: then only the managed settings can turn
// it on, and otherwise it is off, the error saying why.
func ResolveConfig(m *config.Managed, path string, getenv func(string) string) (Settings, error) {
	user, err := config.LoadTelemetry(path)
	s, rerr := ResolveUser(m, user, path, getenv)
	if err == nil {
		return s, rerr
	}
	err = fmt.Errorf("telemetry: your config file's mcp.telemetry could not be read, and it may be what turns telemetry off (fix it, then start again): %w", err)
	if s.Source == SourceManaged {
		return s, errors.Join(rerr, err) // the organization's say, over the user's either way
	}
	return Settings{Off: err.Error()}, err
}

// FromConfig resolves the settings of this process: the machine's
// managed settings (config.LoadManaged) over the user's mcp.telemetry in
// the config file at path ("": config.DefaultPath()) over its own
// environment (getenv), with the headers' references resolved: ${env:}
// from getenv, ${secret:} from secret (nil: the user's secret store). A
// managed policy that cannot be read leaves telemetry off, since it may
// be what turns it off; so does a user's block that cannot be read,
// unless the managed settings decide (ResolveConfig), and a header whose
// reference is not set.
func FromConfig(path string, getenv func(string) string, secret func(string) (string, bool)) (Settings, error) {
	m, err := config.LoadManaged()
	if err != nil {
		err = fmt.Errorf("telemetry is off: the managed settings could not be read: %w", err)
		return Settings{Off: err.Error()}, err
	}
	if path == "" {
		if path, err = config.DefaultPath(); err != nil {
			return Settings{Off: "telemetry is off: " + err.Error()}, err
		}
	}
	// cfgErr, with telemetry on, is the managed settings' export over a
	// user's block that could not be read: on, and told.
	s, cfgErr := ResolveConfig(m, path, getenv)
	if !s.Enabled() {
		return s, cfgErr
	}
	if secret == nil {
		secret = userSecret
	}
	s, err = s.ExpandHeaders(func(name string) (string, bool) {
		if n, ok := strings.CutPrefix(name, config.SecretPrefix); ok {
			return secret(n)
		}
		v := getenv(name)
		return v, v != ""
	})
	if err != nil {
		err = fmt.Errorf("telemetry is off: %w", err)
		return Settings{Source: s.Source, Off: err.Error()}, errors.Join(err, cfgErr)
	}
	return s, cfgErr
}

// FromProcess is FromConfig of the default config file, with the user's
// secrets.
func FromProcess(getenv func(string) string) (Settings, error) {
	return FromConfig("", getenv, nil)
}
