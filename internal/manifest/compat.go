package manifest

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/freecode/freecode/internal/canonjson"
)

// annotationKeywords are the JSON Schema keywords that say something about
// a value without constraining it: a change in them never makes a valid
// call invalid.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "examples": true, "default": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

// Keywords whose value is one subschema, an array of them, or a map of
// names to them.
var (
	schemaKeywords = map[string]bool{
		"items": true, "additionalProperties": true, "not": true, "contains": true, "propertyNames": true,
		"if": true, "then": true, "else": true, "additionalItems": true,
		"unevaluatedProperties": true, "unevaluatedItems": true,
	}
	schemaArrayKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	schemaMapKeywords   = map[string]bool{"$defs": true, "definitions": true, "patternProperties": true, "dependentSchemas": true}
)

// InputCompatible reports whether every call made by the pinned input
// schema is one the live schema accepts too, as far as a structural
// comparison tells: the two may differ only in annotation keywords
// (descriptions, titles, examples, defaults) and in properties the live
// schema adds without requiring them; a required property it drops from
// its required list loosens it too. Anything else (a type, an enum, a
// newly required or removed property, a $ref) is a difference the
// comparison cannot vouch for, and the answer is false.
func InputCompatible(pinned, live json.RawMessage) bool {
	if bytes.Equal(pinned, live) {
		return true
	}
	p, err1 := decodeValue(pinned)
	l, err2 := decodeValue(live)
	if err1 != nil || err2 != nil {
		return false
	}
	return compatSchema(p, l)
}

// decodeValue decodes JSON with numbers kept as written; empty is nil.
func decodeValue(b json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// compatSchema compares two schemas (objects or booleans).
func compatSchema(p, l any) bool {
	pm, pok := p.(map[string]any)
	lm, lok := l.(map[string]any)
	if !pok || !lok {
		return equalValue(p, l)
	}
	for _, k := range unionKeys(pm, lm) {
		pv, inP := pm[k]
		lv, inL := lm[k]
		switch {
		case annotationKeywords[k]:
			continue
		case k == "properties":
			if !compatProperties(pv, lv, lm["required"]) {
				return false
			}
		case k == "required":
			if !requiredSubset(lv, pv) {
				return false
			}
		case !inP || !inL:
			return false
		case schemaKeywords[k]:
			if !compatSchema(pv, lv) {
				return false
			}
		case schemaArrayKeywords[k]:
			pa, ok1 := pv.([]any)
			la, ok2 := lv.([]any)
			if !ok1 || !ok2 || len(pa) != len(la) {
				return false
			}
			for i := range pa {
				if !compatSchema(pa[i], la[i]) {
					return false
				}
			}
		case schemaMapKeywords[k]:
			pmap, ok1 := pv.(map[string]any)
			lmap, ok2 := lv.(map[string]any)
			if !ok1 || !ok2 || !slices.Equal(unionKeys(pmap, nil), unionKeys(lmap, nil)) {
				return false
			}
			for name := range pmap {
				if !compatSchema(pmap[name], lmap[name]) {
					return false
				}
			}
		default:
			if !equalValue(pv, lv) {
				return false
			}
		}
	}
	return true
}

// compatProperties compares two "properties" maps: each property pinned
// must be compatible in the live schema; the live one may add properties
// it does not require.
func compatProperties(p, l, liveRequired any) bool {
	pm, _ := p.(map[string]any)
	lm, _ := l.(map[string]any)
	if p != nil && pm == nil || l != nil && lm == nil {
		return false
	}
	req, _ := liveRequired.([]any)
	for _, name := range unionKeys(pm, lm) {
		pv, inP := pm[name]
		lv, inL := lm[name]
		switch {
		case inP && inL:
			if !compatSchema(pv, lv) {
				return false
			}
		case inL: // added
			if slices.Contains(req, any(name)) {
				return false
			}
		default: // removed: the server may refuse what the model sends
			return false
		}
	}
	return true
}

// requiredSubset reports whether every name the live schema requires was
// required by the pinned one.
func requiredSubset(live, pinned any) bool {
	la, _ := live.([]any)
	pa, _ := pinned.([]any)
	for _, n := range la {
		if !slices.Contains(pa, n) {
			return false
		}
	}
	return true
}

// unionKeys returns the keys of a and b, sorted.
func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// equalValue compares two decoded JSON values in canonical form.
func equalValue(a, b any) bool {
	x, err1 := canonjson.AppendValue(nil, a)
	y, err2 := canonjson.AppendValue(nil, b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
