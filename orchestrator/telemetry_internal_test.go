package orchestrator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/freecode/freecode/permissions"
)

// The rule's source is exported by its name: the Source is a number, and
// string() of it would be that byte ("\x02" for a user rule).
func TestRuleAttrsNameTheSource(t *testing.T) {
	for _, src := range []permissions.Source{permissions.SourceManaged, permissions.SourceUser, permissions.SourceProject, permissions.SourceSession} {
		p := &prepared{rule: &permissions.Rule{Pattern: "mcp__gh__*", Effect: permissions.Deny, Source: src}}
		got := attribute.NewSet(ruleAttrs(p, DecisionDenied)...)
		v, _ := got.Value(attrRuleSource)
		if diff := cmp.Diff(src.String(), v.AsString()); diff != "" || len(v.AsString()) < 2 {
			t.Errorf("%s=%q, want the source's name %q", attrRuleSource, v.AsString(), src.String())
		}
	}
}
