package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A registryVersion of a managed allow- or deny-list entry: the versions
// of its registryName the entry covers, as the MCP Registry numbers them
// (semantic versions, "1.4.2", "2.0.0-beta.1").
//
//	">=1.2.0 <2.0.0"    comparators separated by spaces: all must hold
//	"1.4.2 || >=2.1"     alternatives separated by ||: one must hold
//	"1.4.2", "=1.4.2"    that version alone
//
// The operators are =, >, >=, < and <=; a version may leave out its minor
// and patch numbers (">=2" is ">=2.0.0"). A prerelease sorts before its
// release, as semver says, and (as npm's ranges have it) an allow-list's
// range takes a prerelease only where one of its comparators names a
// prerelease of the same version: "<2.0.0" does not allow 2.0.0-beta.1,
// nor ">=1.2.0" 1.3.0-rc.1. A deny-list's range compares plainly, since
// covering more only blocks more.

// versionRange is a parsed registryVersion: alternatives of comparators.
type versionRange [][]comparator

type comparator struct {
	op string // "=", ">", ">=", "<", "<="
	v  semver
}

// semver is a parsed version: its three numbers and its prerelease.
type semver struct {
	n   [3]uint64
	pre string
}

// parseVersionRange parses a registryVersion; the error says what is wrong.
func parseVersionRange(s string) (versionRange, error) {
	var r versionRange
	for alt := range strings.SplitSeq(s, "||") {
		var all []comparator
		for _, f := range strings.Fields(alt) {
			op := "="
			for _, o := range []string{">=", "<=", ">", "<", "="} {
				if rest, ok := strings.CutPrefix(f, o); ok {
					op, f = o, rest
					break
				}
			}
			v, ok := parseSemver(f)
			if !ok {
				return nil, fmt.Errorf("%q is not a version: want numbers such as 1.4.2 after =, >, >=, < or <=", f)
			}
			all = append(all, comparator{op, v})
		}
		if len(all) == 0 {
			return nil, fmt.Errorf("%q has an empty alternative: want comparators such as \">=1.2.0 <2.0.0\", alternatives joined by ||", s)
		}
		r = append(r, all)
	}
	return r, nil
}

// parseSemver parses MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD], an
// optional leading "v" allowed.
func parseSemver(s string) (semver, bool) {
	s = strings.TrimPrefix(s, "v")
	s, _, _ = strings.Cut(s, "+")
	var v semver
	s, v.pre, _ = strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) > 3 || s == "" {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, false
		}
		v.n[i] = n
	}
	return v, true
}

// compareSemver orders a and b: numbers first, then a prerelease before
// its release, prereleases by their dot-separated identifiers.
func compareSemver(a, b semver) int {
	for i := range a.n {
		if c := cmp.Compare(a.n[i], b.n[i]); c != 0 {
			return c
		}
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	ap, bp := strings.Split(a.pre, "."), strings.Split(b.pre, ".")
	for i := 0; i < len(ap) && i < len(bp); i++ {
		an, aerr := strconv.ParseUint(ap[i], 10, 64)
		bn, berr := strconv.ParseUint(bp[i], 10, 64)
		var c int
		switch {
		case aerr == nil && berr == nil:
			c = cmp.Compare(an, bn)
		case aerr == nil:
			c = -1 // numeric identifiers sort before alphanumeric ones
		case berr == nil:
			c = 1
		default:
			c = strings.Compare(ap[i], bp[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ap), len(bp))
}

// contains reports whether the version v is in r, a prerelease only
// where a comparator of its alternative names one of the same version
// (withPre: any prerelease by its order alone); false when v is no
// version r can compare.
func (r versionRange) contains(version string, withPre bool) bool {
	v, ok := parseSemver(version)
	if !ok {
		return false
	}
	for _, all := range r {
		if allHold(all, v) && (withPre || v.pre == "" || slices.ContainsFunc(all, func(c comparator) bool { return c.v.pre != "" && c.v.n == v.n })) {
			return true
		}
	}
	return false
}

// inRange reports whether version is in the range r as written; false
// when r does not parse.
func inRange(r, version string) bool {
	vr, err := parseVersionRange(r)
	return err == nil && vr.contains(version, false)
}

// comparable reports whether version is one a range can compare.
func (r versionRange) comparable(version string) bool {
	_, ok := parseSemver(version)
	return ok
}

func allHold(all []comparator, v semver) bool {
	for _, c := range all {
		d := compareSemver(v, c.v)
		ok := map[string]bool{"=": d == 0, ">": d > 0, ">=": d >= 0, "<": d < 0, "<=": d <= 0}[c.op]
		if !ok {
			return false
		}
	}
	return true
}
