package providerschema

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// topLevelObject makes the root one object schema.
func (c *conversion) topLevelObject(obj map[string]any) (map[string]any, error) {
	if rest, ok := obj["allOf"].([]any); ok {
		// Left by merging two anyOfs; make it an object the same way.
		delete(obj, "allOf")
		for _, r := range rest {
			if rm, ok := r.(map[string]any); ok {
				if branches, ok := rm["anyOf"].([]any); ok {
					obj = c.flattenUnion(obj, branches)
				}
			}
		}
	}
	if branches, ok := obj["anyOf"].([]any); ok {
		delete(obj, "anyOf")
		obj = c.flattenUnion(obj, branches)
	}
	if r, ok := obj["$ref"].(string); ok {
		// anthropic: the whole input is a recursive definition.
		delete(obj, "$ref")
		name := strings.TrimPrefix(r, "#/$defs/")
		if d, ok := c.defs[name].(map[string]any); ok {
			for k, v := range d {
				if _, ok := obj[k]; !ok {
					obj[k] = v
				}
			}
		}
	}
	switch t := obj["type"].(type) {
	case nil:
		obj["type"] = "object"
		if _, ok := obj["properties"]; !ok {
			obj["properties"] = map[string]any{}
		}
	case string:
		if t != "object" {
			return nil, fmt.Errorf("input schema has type %q: tool arguments are always an object", t)
		}
		if _, ok := obj["properties"]; !ok {
			obj["properties"] = map[string]any{} // same meaning; some OpenAI-compatible servers require it
		}
	case []any:
		if !slices.Contains(t, any("object")) {
			return nil, fmt.Errorf("input schema has types %v, none of them object: tool arguments are always an object", t)
		}
		obj["type"] = "object"
		c.problem("/type", "types %v narrowed to object (tool arguments are always an object)", t)
	default:
		return nil, fmt.Errorf("input schema has type %s: want \"object\"", short(t))
	}
	return obj, nil
}

// flattenUnion folds a top-level anyOf of object schemas into obj:
// properties are the union, required the intersection.
func (c *conversion) flattenUnion(obj map[string]any, branches []any) map[string]any {
	props, _ := obj["properties"].(map[string]any)
	props = cloneMap(props)
	var required []any
	var sets []string // each branch's required names, to tell the model
	first := true
	n := 0
	for i, b := range branches {
		bm, ok := b.(map[string]any)
		if !ok {
			continue
		}
		if t, ok := bm["type"]; ok && t != "object" && !slices.Contains(asList(t), any("object")) {
			c.problem(fmt.Sprintf("/anyOf/%d", i), "branch of type %v can never match an arguments object; left out", t)
			continue
		}
		n++
		bp, _ := bm["properties"].(map[string]any)
		for name, s := range bp {
			if old, ok := props[name]; ok && !reflect.DeepEqual(old, s) {
				props[name] = map[string]any{"anyOf": []any{old, s}}
				if oa, ok := old.(map[string]any); ok && oa["anyOf"] != nil && len(oa) == 1 {
					props[name] = map[string]any{"anyOf": append(asList(oa["anyOf"]), s)}
				}
				continue
			}
			props[name] = s
		}
		req := asList(bm["required"])
		names := make([]string, 0, len(req))
		for _, r := range req {
			names = append(names, fmt.Sprint(r))
		}
		sets = append(sets, "("+strings.Join(names, ", ")+")")
		if first {
			required = req
			first = false
			continue
		}
		required = slices.DeleteFunc(required, func(r any) bool { return !slices.Contains(req, r) })
	}
	for _, r := range asList(obj["required"]) {
		if !slices.Contains(required, r) {
			required = append(required, r)
		}
	}
	obj["properties"] = props
	if len(required) > 0 {
		obj["required"] = required
	} else {
		delete(obj, "required")
	}
	obj["type"] = "object"
	if slices.ContainsFunc(sets, func(s string) bool { return s != sets[0] }) {
		// The provider's copy cannot say which names go together; the
		// description can.
		note := "Required: " + strings.Join(sets, " or ") + "."
		if d, ok := obj["description"].(string); ok && d != "" {
			note = d + " " + note
		}
		obj["description"] = note
	}
	c.problem("", "top-level union of %d object shapes sent as one object (properties: union, required: intersection); the exact shape is checked by validation", n)
	return obj
}
