package protocol

// Rule is one permission rule in force (freecode/permissions).
type Rule struct {
	Rule   string     `json:"rule"`
	Effect RuleEffect `json:"effect"`
	Source RuleSource `json:"source"`
}

// RuleEffect is what a rule does to the calls it matches.
type RuleEffect string

// The effects of a Rule.
const (
	EffectAllow RuleEffect = "allow"
	EffectAsk   RuleEffect = "ask"
	EffectDeny  RuleEffect = "deny"
)

// RuleSource is where a rule comes from.
type RuleSource string

// The sources of a Rule.
const (
	// RulesManaged is the organization's: its managed settings, which no
	// other rule loosens.
	RulesManaged RuleSource = "managed"
	RulesUser    RuleSource = "user"    // the user's settings.json
	RulesProject RuleSource = "project" // the project's .freecode/settings.json
	RulesLocal   RuleSource = "local"   // the project's .freecode/settings.local.json
	// RulesSession is an "always allow" answer, for the rest of the
	// session.
	RulesSession RuleSource = "session"
)

// RulesReview is what a trusted project's rule files loosen beyond the
// rules the user accepted when they trusted it (or last accepted a change):
// allow rules added, which are ignored, and deny and ask rules taken out,
// which are still enforced, until the user accepts them with
// freecode/project/trust and Hash. It is freecode/project's pendingRules
// and the params of freecode/rules/reviewNeeded, where no files means that
// nothing awaits review any more.
type RulesReview struct {
	// Hash names the rules accepting records: freecode/project/trust's
	// rulesHash. Absent when nothing awaits.
	Hash  string           `json:"hash,omitempty"`
	Files []RuleFileChange `json:"files"`
}

// RuleFileChange is how one rule file loosened.
type RuleFileChange struct {
	Path   string         `json:"path"`
	Source RuleFileSource `json:"source"`
	Allow  []string       `json:"allow,omitempty"` // allow rules added: ignored until accepted
	Ask    []string       `json:"ask,omitempty"`   // ask rules removed: still enforced until accepted
	Deny   []string       `json:"deny,omitempty"`  // deny rules removed: still enforced until accepted
}

// RuleFileSource is which of a project's rule files a RuleFileChange is:
// a RuleSource, only ever one of these two.
type RuleFileSource string

// The files of a RuleFileChange.
const (
	RuleFileProject RuleFileSource = "project" // .freecode/settings.json
	RuleFileLocal   RuleFileSource = "local"   // .freecode/settings.local.json
)
