package orchestrator

import (
	"slices"
	"strings"
)

// expansionWeight is what a word added to a query from verbGroups counts
// for, against 1 for the query's own: enough to rank a tool named with
// another verb of the same action above one that matches nothing else,
// too little to outrank one that matches the query's own words.
var expansionWeight = 0.1

// verbGroups are the verbs of tool names that stand for one action: each
// line is one of PowerShell's approved verbs followed by the synonyms its
// documentation ("Approved Verbs for PowerShell Commands") and PSSwagger's
// map of API operation verbs to them (PSCommandVerbMap) send to it. The
// vocabulary is theirs, not drawn from any benchmark: a query that says
// "delete" finds a tool named remove_…, one that says "run" finds
// execute_….
var verbGroups = [][]string{
	strings.Fields("add append attach concatenate insert apply"),
	strings.Fields("clear flush erase unset"),
	strings.Fields("copy duplicate clone replicate"),
	strings.Fields("find search locate discover"),
	strings.Fields("get access list obtain dump acquire examine retrieve"),
	strings.Fields("join combine unite associate merge"),
	strings.Fields("move transfer migrate"),
	strings.Fields("new create generate allocate provision make"),
	strings.Fields("remove delete cut dispose discard eliminate"),
	strings.Fields("set assign configure"),
	strings.Fields("show display"),
	strings.Fields("send broadcast mail"),
	strings.Fields("compare diff"),
	strings.Fields("compress compact"),
	strings.Fields("export extract"),
	strings.Fields("import load"),
	strings.Fields("edit change modify"),
	strings.Fields("update patch refresh upgrade renew"),
	strings.Fields("measure calculate determine"),
	strings.Fields("test validate check verify analyze evaluate"),
	strings.Fields("invoke run execute trigger"),
	strings.Fields("start launch initiate boot"),
	strings.Fields("stop cancel end kill terminate"),
	strings.Fields("suspend pause"),
	strings.Fields("submit post"),
	strings.Fields("grant allow authorize"),
	strings.Fields("protect encrypt seal"),
	strings.Fields("unprotect decrypt unseal"),
}

// verbIndex maps each term of verbGroups to the other terms of its groups.
var verbIndex = relatedTerms(verbGroups)

// relatedTerms maps each term of groups to the other terms of its groups.
func relatedTerms(groups [][]string) map[string][]string {
	m := make(map[string][]string)
	for _, g := range groups {
		var ts []string
		for _, w := range g {
			ts = slices.AppendSeq(ts, terms(w))
		}
		for _, t := range ts {
			for _, o := range ts {
				if o != t && !slices.Contains(m[t], o) {
					m[t] = append(m[t], o)
				}
			}
		}
	}
	return m
}

// expansions returns the terms term stands with in verbGroups.
func expansions(term string) []string { return verbIndex[term] }
