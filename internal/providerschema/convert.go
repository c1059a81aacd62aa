package providerschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/freecode/freecode/internal/canonjson"
)

// Format is a provider's tool definition format.
type Format string

// The formats a schema is converted for; defscache names them the same.
const (
	Anthropic Format = "anthropic" // the Messages API's input_schema
	OpenAI    Format = "openai"    // Chat Completions' function parameters
)

// openaiRecursionDepth is how many times one recursive definition is inlined
// into itself for openai before the leaf.
const openaiRecursionDepth = 3

// maxSchemaNodes bounds the size of a converted schema: inlining a definition
// used in many places multiplies it, and a hostile schema could explode.
const maxSchemaNodes = 20000

// convertSchema converts input for format f, which the caller has checked:
// the converted schema (canonical JSON), the problems met, or an error when
// the schema cannot be used at all.
func convertSchema(f Format, input json.RawMessage) (json.RawMessage, []string, error) {
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage(`{"properties":{},"type":"object"}`),
			[]string{"/: the server gave no input schema; sent as an object with no properties"}, nil
	}
	d := json.NewDecoder(bytes.NewReader(trimmed))
	d.UseNumber()
	var root any
	if err := d.Decode(&root); err != nil {
		return nil, nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	if d.More() {
		return nil, nil, fmt.Errorf("input schema has data after the JSON value")
	}
	c := &conversion{format: f, root: root, expanding: map[string]int{}, recursive: map[string]bool{}, defs: map[string]any{}}
	switch r := root.(type) {
	case bool:
		if !r {
			return nil, nil, fmt.Errorf("input schema is false: the tool accepts no arguments at all")
		}
		root = map[string]any{}
	case map[string]any:
	default:
		return nil, nil, fmt.Errorf("input schema is a JSON %s, not an object", kindOf(root))
	}
	c.anchors = map[string]string{}
	c.findAnchors(root, "")
	c.expanding[""] = 1 // a "$ref": "#" inside is recursion into the root
	out, err := c.convert(root, "")
	if err != nil {
		return nil, nil, err
	}
	obj, ok := out.(map[string]any)
	if !ok { // a top-level $ref to a boolean schema
		obj = map[string]any{}
	}
	if len(obj) == 0 {
		c.problem("", "the schema is empty (any arguments); sent as an object with no properties")
	}
	obj, err = c.topLevelObject(obj)
	if err != nil {
		return nil, nil, err
	}
	if len(c.defs) > 0 {
		obj["$defs"] = c.defs
	}
	enc, err := canonjson.AppendValue(make([]byte, 0, len(trimmed)), obj)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the converted schema: %w", err)
	}
	slices.Sort(c.problems)
	c.problems = slices.Compact(c.problems)
	return json.RawMessage(enc), c.problems, nil
}

// conversion is the state of one convertSchema.
type conversion struct {
	format   Format
	root     any
	anchors  map[string]string // anchor name → JSON pointer
	problems []string
	nodes    int

	expanding map[string]int    // pointer → how many times it is being expanded now
	recursive map[string]bool   // pointers found to refer to themselves
	defs      map[string]any    // anthropic: recursive definitions kept by name
	defNames  map[string]string // pointer → its name in defs
}

func (c *conversion) problem(path, format string, args ...any) {
	if path == "" {
		path = "/"
	}
	c.problems = append(c.problems, path+": "+fmt.Sprintf(format, args...))
}

// droppedKeys are identifiers and containers that mean nothing once every
// reference is inlined.
var droppedKeys = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$anchor": true,
	"$dynamicAnchor": true, "$recursiveAnchor": true, "$vocabulary": true, "$defs": true, "definitions": true,
}

// Keywords whose value is one subschema, a list of them, or a map of them.
var (
	subschemaKeys     = []string{"additionalProperties", "items", "additionalItems", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedProperties", "unevaluatedItems"}
	subschemaListKeys = []string{"prefixItems", "anyOf", "oneOf", "allOf"}
	subschemaMapKeys  = []string{"properties", "patternProperties", "dependentSchemas", "dependencies"}
)

// convert returns the converted copy of the schema s found at path.
func (c *conversion) convert(s any, path string) (any, error) {
	c.nodes++
	if c.nodes > maxSchemaNodes {
		return nil, fmt.Errorf("input schema is larger than %d subschemas once its references are inlined", maxSchemaNodes)
	}
	m, ok := s.(map[string]any)
	if !ok {
		return s, nil // true, false (or junk the provider will judge)
	}
	if ref, ok := m["$ref"].(string); ok {
		return c.ref(m, ref, path)
	}
	for _, k := range []string{"$dynamicRef", "$recursiveRef"} {
		if dref, ok := m[k].(string); ok {
			// Without dynamic scopes, these resolve like a $ref to their
			// anchor (or the root); say so, since an override would be missed.
			c.problem(path, "%s %q resolved statically", k, dref)
			rest := cloneMap(m)
			delete(rest, k)
			return c.ref(rest, dref, path)
		}
	}
	out := make(map[string]any, len(m))
	// Sorted keys keep problems and $defs names deterministic.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if droppedKeys[k] {
			continue
		}
		switch {
		case slices.Contains(subschemaKeys, k):
			if k == "items" {
				if list, ok := v.([]any); ok { // draft-07 tuple form
					conv, err := c.convertList(list, path+"/items")
					if err != nil {
						return nil, err
					}
					out[k] = conv
					continue
				}
			}
			conv, err := c.convert(v, path+"/"+k)
			if err != nil {
				return nil, err
			}
			out[k] = conv
		case slices.Contains(subschemaListKeys, k):
			list, ok := v.([]any)
			if !ok {
				out[k] = v
				continue
			}
			conv, err := c.convertList(list, path+"/"+k)
			if err != nil {
				return nil, err
			}
			out[k] = conv
		case slices.Contains(subschemaMapKeys, k):
			mm, ok := v.(map[string]any)
			if !ok {
				out[k] = v
				continue
			}
			conv := make(map[string]any, len(mm))
			for _, name := range slices.Sorted(maps.Keys(mm)) {
				sub := mm[name]
				cs, err := c.convert(sub, path+"/"+k+"/"+escapePointer(name))
				if err != nil {
					return nil, err
				}
				conv[name] = cs
			}
			out[k] = conv
		default:
			out[k] = v
		}
	}
	c.upgradeDraft(out)
	if one, ok := out["oneOf"]; ok {
		delete(out, "oneOf")
		if prev, ok := out["anyOf"]; ok {
			// Both at one level: the oneOf takes the anyOf's place and the
			// anyOf moves into an allOf branch, merged below.
			out["allOf"] = append(asList(out["allOf"]), map[string]any{"anyOf": prev})
		}
		out["anyOf"] = one
		c.problem(path, "oneOf sent as anyOf (exclusivity is checked by validation only)")
	}
	if all, ok := out["allOf"].([]any); ok {
		delete(out, "allOf")
		merged := out
		for i, branch := range all {
			merged = c.merge(merged, branch, fmt.Sprintf("%s/allOf/%d", path, i))
		}
		out = merged
	}
	return out, nil
}

// upgradeDraft rewrites the pre-2020-12 spellings the output's draft (2020-12,
// what both providers read) would misread: a tuple "items" array becomes
// "prefixItems" with "additionalItems" as the new "items", and
// "dependencies" splits into "dependentRequired" and "dependentSchemas", and
// draft-04's boolean exclusiveMinimum/exclusiveMaximum become numbers.
func (c *conversion) upgradeDraft(out map[string]any) {
	for _, pair := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if excl, ok := out[pair[0]].(bool); ok {
			delete(out, pair[0])
			if bound, ok := out[pair[1]]; ok && excl {
				out[pair[0]] = bound
				delete(out, pair[1])
			}
		}
	}
	if tuple, ok := out["items"].([]any); ok {
		out["prefixItems"] = tuple
		delete(out, "items")
		if more, ok := out["additionalItems"]; ok {
			out["items"] = more
		}
	}
	delete(out, "additionalItems") // meaningless without a tuple
	deps, ok := out["dependencies"].(map[string]any)
	if !ok {
		return
	}
	delete(out, "dependencies")
	req, _ := out["dependentRequired"].(map[string]any)
	schemas, _ := out["dependentSchemas"].(map[string]any)
	for name, d := range deps {
		if list, ok := d.([]any); ok {
			if req == nil {
				req = map[string]any{}
			}
			req[name] = list
			continue
		}
		if schemas == nil {
			schemas = map[string]any{}
		}
		schemas[name] = d
	}
	if req != nil {
		out["dependentRequired"] = req
	}
	if schemas != nil {
		out["dependentSchemas"] = schemas
	}
}

func (c *conversion) convertList(list []any, path string) ([]any, error) {
	out := make([]any, len(list))
	for i, sub := range list {
		cs, err := c.convert(sub, path+"/"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		out[i] = cs
	}
	return out, nil
}
