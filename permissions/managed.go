package permissions

import (
	"fmt"
	"slices"
)

// loadManaged compiles the organization's rules (LoadOptions.Managed):
// deny, then ask, then allow rules, each in the order given. A rule that is
// not valid, or whose effect is none of the three, is skipped with a
// warning at its position in its managed file.
//
// An invalid deny or ask rule is skipped, not turned into a wider one: what
// it meant to cover is not known, and denying or asking about every tool
// instead would stop the user's work for a typo only the organization can
// fix. It does not go unnoticed: its warning, like a settings file's, says
// "ignored deny rule" with the managed file, line and column.
func loadManaged(opts LoadOptions) ([]Rule, []Warning) {
	var byEffect [Deny + 1][]Rule
	var warnings []Warning
	for _, m := range opts.Managed {
		var e Effect
		switch m.Effect {
		case "allow":
			e = Allow
		case "ask":
			e = Ask
		case "deny":
			e = Deny
		default:
			warnings = append(warnings, Warning{Path: m.Path, Line: m.Line, Col: m.Col,
				Msg: fmt.Sprintf("your organization's rule %q is ignored: its effect %q is none of allow, ask, deny", m.Pattern, m.Effect)})
			continue
		}
		_, p, err := compile(m.Pattern)
		if err != nil {
			warnings = append(warnings, Warning{Path: m.Path, Line: m.Line, Col: m.Col, Effect: e, Pattern: m.Pattern, Msg: err.Error()})
			continue
		}
		r := Rule{Pattern: p, Effect: e, Source: SourceManaged, File: m.Path}
		if !slices.Contains(byEffect[e], r) {
			byEffect[e] = append(byEffect[e], r)
		}
	}
	return slices.Concat(byEffect[Deny], byEffect[Ask], byEffect[Allow]), warnings
}

// managedOnly wraps a file's admit (which may be nil) for
// LoadOptions.ManagedOnly: every allow rule is ignored, with a message that
// names path, the managed file that says so.
func managedOnly(path string, admit func(Effect, string) string) func(Effect, string) string {
	where := "your organization's managed settings"
	if path != "" {
		where = path
	}
	msg := fmt.Sprintf("your organization allows only its own allow rules (allowManagedPermissionRulesOnly in %s)", where)
	return func(e Effect, p string) string {
		if e == Allow {
			return msg
		}
		if admit != nil {
			return admit(e, p)
		}
		return ""
	}
}
