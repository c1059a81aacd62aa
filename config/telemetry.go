package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// The OpenTelemetry export's blocks: the user's "mcp.telemetry" in the
// config file and the managed settings' "telemetry" (ManagedTelemetry),
// which have the same keys and are read by one decoder. A project's file
// has no say: its telemetry keys are refused with a warning
// (refuseProjectTelemetry), and package telemetry never reads them.

// The OTLP protocols FreeCode exports with: TelemetryProtocol, the
// default, and TelemetryProtocolGRPC.
const TelemetryProtocolGRPC = "grpc"

// Telemetry is the "telemetry" block of the user's config file
// (mcp.telemetry): the user's say over the OpenTelemetry export (package
// telemetry), under the managed settings' block and over the process's
// OTEL_* variables. A nil *Telemetry is no block.
type Telemetry struct {
	// Enabled is "enabled": nil when the block does not set it (the
	// environment decides, and the block's endpoint, protocol and headers
	// are not used), else on or off whatever the environment says.
	Enabled *bool
	// Endpoint is the OTLP base URL: for http/protobuf the URL /v1/traces,
	// /v1/metrics and /v1/logs are added to ("https://otel.example.com:4318"),
	// for grpc the collector's address as it is ("https://otel.example.com:4317";
	// http: without TLS). "" leaves it to the environment's.
	Endpoint string
	// Protocol is TelemetryProtocol or TelemetryProtocolGRPC; "" follows
	// the environment's OTEL_EXPORTER_OTLP_PROTOCOL (default http/protobuf).
	Protocol string
	// Headers are sent with every export, in place of
	// OTEL_EXPORTER_OTLP_HEADERS. Values may hold ${env:NAME} and
	// ${secret:NAME}, resolved when telemetry starts. Never shown or
	// logged.
	Headers map[string]string
	// Arguments is "arguments": true exports a call's arguments and result
	// on its execute_tool span, redacted as the audit trail's
	// audit.arguments values are; nil when the block does not set it
	// (never exported).
	Arguments *bool
}

// telemetryKeys are the keys of a telemetry block, the user's and the
// managed settings'.
var telemetryKeys = []string{"enabled", "endpoint", "protocol", "headers", "arguments"}

// telemetrySet says which keys of a block were read.
type telemetrySet struct{ enabled, endpoint, protocol, headers, arguments bool }

// decodeTelemetry reads the members m of a telemetry block whose key is
// key ("mcp.telemetry", "telemetry"). A value that cannot be read is
// fail's (its key, a message) and sets nothing; a key it does not know
// is unknown's.
func decodeTelemetry(key string, m map[string]json.RawMessage, fail func(key, msg string), unknown func(key string)) (Telemetry, telemetrySet) {
	var t Telemetry
	var set telemetrySet
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if isNull(v) {
			continue
		}
		fk := key + "." + k
		switch k {
		case "enabled", "arguments":
			var b bool
			if json.Unmarshal(v, &b) != nil {
				fail(fk, "want true or false")
				continue
			}
			if k == "enabled" {
				t.Enabled, set.enabled = &b, true
			} else {
				t.Arguments, set.arguments = &b, true
			}
		case "endpoint":
			var s string
			if json.Unmarshal(v, &s) != nil || CheckTelemetryEndpoint(s) != nil {
				fail(fk, `want the http or https URL of an OTLP endpoint, with neither user info nor query: "https://otel.example.com:4318" (http/protobuf) or "https://otel.example.com:4317" (grpc)`)
				continue
			}
			t.Endpoint, set.endpoint = s, true
		case "protocol":
			var s string
			if json.Unmarshal(v, &s) != nil || (s != TelemetryProtocol && s != TelemetryProtocolGRPC) {
				fail(fk, fmt.Sprintf("want %q or %q", TelemetryProtocol, TelemetryProtocolGRPC))
				continue
			}
			t.Protocol, set.protocol = s, true
		case "headers":
			var h map[string]string
			if json.Unmarshal(v, &h) != nil || h == nil {
				fail(fk, "want an object of header names to string values")
				continue
			}
			bad := false
			for _, name := range slices.Sorted(maps.Keys(h)) {
				if !validHeaderName(name) {
					fail(fk, fmt.Sprintf("%q is not a valid HTTP header name", name))
					bad = true
				} else if strings.ContainsAny(h[name], "\r\n\x00") {
					// The value is a secret: the problem names the header only.
					fail(fk, fmt.Sprintf("the value of header %q holds a line break or NUL", name))
					bad = true
				}
			}
			if !bad {
				t.Headers, set.headers = h, true
			}
		default:
			unknown(fk)
		}
	}
	return t, set
}

// CheckTelemetryEndpoint reports whether raw is an OTLP endpoint a
// telemetry block may name: an http or https URL with a host, and
// neither user info (a secret goes in a header) nor query nor fragment.
func CheckTelemetryEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not the http or https URL of an OTLP endpoint", raw)
	}
	return nil
}

// telemetry decodes the user's mcp.telemetry block.
func (d *decoder) telemetry(key string, raw json.RawMessage) *Telemetry {
	m, ok := d.object(key, "", raw)
	if !ok {
		return nil
	}
	t, _ := decodeTelemetry(key, m,
		func(fk, msg string) { d.fail(fk, "", "%s", msg) },
		func(fk string) { d.unknown(fk, "", telemetryKeys) })
	return &t
}

// LoadTelemetry reads the user's mcp.telemetry block alone from the
// config file at path: nil when the file or the block is absent. Unlike
// Load, a problem elsewhere in the file (a server entry that does not
// validate) does not keep the block from being read, so that an
// "enabled": false holds whatever else the file holds. The error is the
// file's when it cannot be read or is not JSON, or the block's problems;
// the block is then unknown (nil).
func LoadTelemetry(path string) (*Telemetry, error) {
	data, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	root, d, err := decodeRoot(path, data, ScopeUser)
	if err != nil || root == nil {
		return nil, err
	}
	var t *Telemetry
	if raw, ok := root[keyMCP]; ok && !isNull(raw) {
		if m, ok := d.object(keyMCP, "", raw); ok {
			if raw, ok := m["telemetry"]; ok && !isNull(raw) {
				t = d.telemetry(keyMCP+".telemetry", raw)
			}
		}
	}
	d.place()
	if len(d.problems) > 0 {
		sortProblems(d.problems)
		return nil, &ValidationError{Path: path, Problems: d.problems}
	}
	return t, nil
}

// refuseProjectTelemetry is the warning of a project file's telemetry
// key (mcp.telemetry, or a "telemetry" at its top): ignored, at its name.
// A repository never turns the export on, points it elsewhere or adds
// headers to it.
func (d *decoder) refuseProjectTelemetry(key string) {
	line, col := d.pos.at(key, true)
	d.warnings = append(d.warnings, Problem{Key: key, Line: line, Col: col, Warning: true,
		Msg: `a project cannot configure telemetry: "` + key + `" is ignored; telemetry is set by your own config file's mcp.telemetry, your OTEL_* variables or your organization's managed settings`})
}
