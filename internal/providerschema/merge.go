package providerschema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// merge combines two converted schemas that must both hold (allOf), a into
// b's keywords; a's annotations win.
func (c *conversion) merge(a map[string]any, b any, path string) map[string]any {
	bm, ok := b.(map[string]any)
	if !ok {
		if b == false {
			c.problem(path, "allOf branch is false: nothing can match; the branch is left out of the provider's copy")
		}
		return a
	}
	out := cloneMap(a)
	for k, bv := range bm {
		av, ok := out[k]
		if !ok {
			out[k] = bv
			continue
		}
		if reflect.DeepEqual(av, bv) {
			continue
		}
		switch k {
		case "description", "title", "default", "examples", "$ref":
			// a's annotation wins
		case "properties", "patternProperties", "dependentSchemas":
			am, aok := av.(map[string]any)
			bmm, bok := bv.(map[string]any)
			if !aok || !bok {
				c.problem(path, "%s is not an object; kept the first", k)
				continue
			}
			union := cloneMap(am)
			for name, bs := range bmm {
				if as, ok := union[name]; ok {
					if asm, ok := as.(map[string]any); ok {
						union[name] = c.merge(asm, bs, path+"/"+k+"/"+escapePointer(name))
						continue
					}
				}
				union[name] = bs
			}
			out[k] = union
		case "required":
			req := asList(av)
			for _, r := range asList(bv) {
				if !slices.Contains(req, r) {
					req = append(req, r)
				}
			}
			out[k] = req
		case "type":
			t, ok := intersectTypes(av, bv)
			if !ok {
				c.problem(path, "allOf branches want conflicting types %v and %v; kept %v", av, bv, av)
				continue
			}
			out[k] = t
		case "enum":
			var both []any
			for _, x := range asList(av) {
				if slices.ContainsFunc(asList(bv), func(y any) bool { return reflect.DeepEqual(x, y) }) {
					both = append(both, x)
				}
			}
			if len(both) == 0 {
				c.problem(path, "allOf branches have no enum value in common; kept the first list")
				continue
			}
			out[k] = both
		case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties":
			out[k] = tighterBound(av, bv, true)
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties":
			out[k] = tighterBound(av, bv, false)
		case "additionalProperties":
			// false anywhere closes the merged object: that is what a
			// generated allOf of partial objects almost always means.
			if av == false || bv == false {
				out[k] = false
				continue
			}
			if asm, ok := av.(map[string]any); ok {
				out[k] = c.merge(asm, bv, path+"/"+k)
				continue
			}
			out[k] = bv
		case "items", "additionalItems", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems":
			if asm, ok := av.(map[string]any); ok {
				out[k] = c.merge(asm, bv, path+"/"+k)
				continue
			}
			c.problem(path, "allOf branches disagree on %s; kept the first", k)
		case "anyOf":
			// Two unions that must both hold: keep the second as an allOf
			// branch of its own (the provider accepts allOf below the top).
			out["allOf"] = append(asList(out["allOf"]), map[string]any{"anyOf": bv})
		default:
			c.problem(path, "allOf branches disagree on %s (%v, %v); kept the first", k, short(av), short(bv))
		}
	}
	return out
}

func intersectTypes(a, b any) (any, bool) {
	as, bs := asList(a), asList(b)
	var both []any
	for _, x := range as {
		for _, y := range bs {
			switch {
			case x == y:
				both = append(both, x)
			case x == "integer" && y == "number", x == "number" && y == "integer":
				both = append(both, "integer")
			}
		}
	}
	both = slices.CompactFunc(both, func(x, y any) bool { return x == y })
	switch len(both) {
	case 0:
		return nil, false
	case 1:
		return both[0], true
	}
	return both, true
}

// tighterBound picks the tighter of two numeric bounds.
func tighterBound(a, b any, lower bool) any {
	af, aerr := toFloat(a)
	bf, berr := toFloat(b)
	if aerr != nil || berr != nil {
		return a
	}
	if (lower && bf > af) || (!lower && bf < af) {
		return b
	}
	return a
}

func toFloat(v any) (float64, error) {
	switch n := v.(type) {
	case json.Number:
		return n.Float64()
	case float64:
		return n, nil
	}
	return 0, fmt.Errorf("not a number")
}

func asList(v any) []any {
	switch l := v.(type) {
	case []any:
		return slices.Clone(l)
	case nil:
		return nil
	}
	return []any{v}
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
