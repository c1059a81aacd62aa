package orchestrator

// Provider-facing schemas.
//
// A tool's inputSchema is kept whole for validation (validate.go); what a
// provider sees is a converted copy, made self-contained and shaped to what
// that provider accepts. The rules:
//
//   - Local references ("#/$defs/x", "#/definitions/x", any JSON pointer into
//     the schema, "#name" anchors) are inlined. A reference that leaves the
//     document (a URL, a file, a relative path) is an error: nothing is fetched.
//   - Recursion: for anthropic a recursive definition is kept as
//     "$defs" + "$ref" (Anthropic accepts local references in non-strict tool
//     schemas). For openai it is inlined openaiRecursionDepth levels deep and
//     then stops at a leaf that keeps the type and says, in its description,
//     that deeper levels are not described; a problem is reported. OpenAI's own
//     strict mode documents recursive $ref support, but we send Chat
//     Completions tools without strict, to OpenAI-compatible servers too, and
//     many of those do not resolve references.
//   - allOf is merged: properties and required are unions, numeric bounds take
//     the tighter value, conflicting types or values are reported.
//   - oneOf becomes anyOf (both providers accept anyOf below the top level;
//     neither constrains generation with oneOf's exclusivity anyway — the
//     validator still enforces it).
//   - The top level must be one object schema: Anthropic rejects oneOf, anyOf
//     and allOf at the top of input_schema ("input_schema does not support
//     oneOf, allOf, or anyOf at the top level", anthropics/claude-code#5319)
//     and OpenAI requires parameters to be an object. A top-level union of
//     objects becomes one object whose properties are the union of the
//     branches' and whose required list is their intersection, with a problem.
//   - $schema, $id, $comment, $anchor and the definitions containers are
//     schemaDropped once inlined; every other keyword is kept as it is.
//   - A missing schema (absent, null or empty) becomes an object with no
//     properties, and that is reported. A real schema is never collapsed.
//
// Problems are returned as "<JSON pointer into the input>: <what happened>".
// They describe where the provider's view is looser than the real schema;
// the arguments are still validated against the real one.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/canonjson"
)

// openaiRecursionDepth is how many times one recursive definition is inlined
// into itself for openai before the leaf.
const openaiRecursionDepth = 3

// maxSchemaNodes bounds the size of a converted schema: inlining a definition
// used in many places multiplies it, and a hostile schema could explode.
const maxSchemaNodes = 20000

// ProviderSchema converts a tool's input schema for format f. It returns the
// converted schema (canonical JSON), the problems met (what the provider's
// copy could not express), or an error when the schema cannot be used at all.
//
// Results are memoized by format and input bytes, because the defs cache
// rebuilds every tool's definition on each tools-changed event and most
// schemas are the same as last time (a reconnect). The returned schema is
// shared: callers must not modify it.
func ProviderSchema(f defscache.Format, input json.RawMessage) (json.RawMessage, []string, error) {
	if f != defscache.FormatAnthropic && f != defscache.FormatOpenAI {
		return nil, nil, fmt.Errorf("%w %q", defscache.ErrUnknownFormat, f)
	}
	schemaMemo.mu.Lock()
	r, ok := schemaMemo.m[f][string(input)] // no copy of input for a lookup
	schemaMemo.mu.Unlock()
	if !ok {
		r.schema, r.problems, r.err = providerSchema(f, input)
		schemaMemo.mu.Lock()
		m := schemaMemo.m[f]
		if m == nil || len(m) >= maxSchemaMemo {
			m = map[string]schemaMemoResult{} // crude, but bounded; a rebuild refills it
			schemaMemo.m[f] = m
		}
		m[string(input)] = r
		schemaMemo.mu.Unlock()
	}
	return r.schema, slices.Clone(r.problems), r.err
}

// maxSchemaMemo bounds the memo of ProviderSchema per format (a few
// thousand tools).
const maxSchemaMemo = 4096

type schemaMemoResult struct {
	schema   json.RawMessage
	problems []string
	err      error
}

var schemaMemo = struct {
	mu sync.Mutex
	m  map[defscache.Format]map[string]schemaMemoResult
}{m: map[defscache.Format]map[string]schemaMemoResult{}}

func providerSchema(f defscache.Format, input json.RawMessage) (json.RawMessage, []string, error) {
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
	c := &schemaConverter{format: f, root: root, expanding: map[string]int{}, recursive: map[string]bool{}, defs: map[string]any{}}
	switch r := root.(type) {
	case bool:
		if !r {
			return nil, nil, fmt.Errorf("input schema is false: the tool accepts no arguments at all")
		}
		root = map[string]any{}
	case map[string]any:
	default:
		return nil, nil, fmt.Errorf("input schema is a JSON %s, not an object", schemaKind(root))
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
	enc, err := appendSchemaJSON(make([]byte, 0, len(trimmed)), obj)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the converted schema: %w", err)
	}
	slices.Sort(c.problems)
	c.problems = slices.Compact(c.problems)
	return json.RawMessage(enc), c.problems, nil
}

// appendSchemaJSON writes v canonically (sorted keys, defscache's string
// escaping, numbers as written): the bytes encoding/json would give, faster.
func appendSchemaJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = canonjson.AppendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendSchemaJSON(dst, v[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendSchemaJSON(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case string:
		return canonjson.AppendString(dst, v), nil
	case json.Number:
		return append(dst, v...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case nil:
		return append(dst, "null"...), nil
	}
	b, err := json.Marshal(v) // not produced by the decoder; kept for safety
	return append(dst, b...), err
}

type schemaConverter struct {
	format   defscache.Format
	root     any
	anchors  map[string]string // anchor name → JSON pointer
	problems []string
	nodes    int

	expanding map[string]int    // pointer → how many times it is being expanded now
	recursive map[string]bool   // pointers found to refer to themselves
	defs      map[string]any    // anthropic: recursive definitions kept by name
	defNames  map[string]string // pointer → its name in defs
}

func (c *schemaConverter) problem(path, format string, args ...any) {
	if path == "" {
		path = "/"
	}
	c.problems = append(c.problems, path+": "+fmt.Sprintf(format, args...))
}

// schemaDropped keywords: identifiers and containers that mean nothing once
// every reference is inlined.
var schemaDropped = map[string]bool{
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
func (c *schemaConverter) convert(s any, path string) (any, error) {
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
			rest := cloneSchemaMap(m)
			delete(rest, k)
			return c.ref(rest, dref, path)
		}
	}
	out := make(map[string]any, len(m))
	// Sorted keys keep problems and $defs names deterministic.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if schemaDropped[k] {
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
				cs, err := c.convert(sub, path+"/"+k+"/"+schemaEscapePtr(name))
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
			out["allOf"] = append(schemaList(out["allOf"]), map[string]any{"anyOf": prev})
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
func (c *schemaConverter) upgradeDraft(out map[string]any) {
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

func (c *schemaConverter) convertList(list []any, path string) ([]any, error) {
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

// ref inlines the target of ref into m's other keywords.
func (c *schemaConverter) ref(m map[string]any, ref, path string) (any, error) {
	ptr, err := c.resolvePointer(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", schemaPath(path), err)
	}
	target, err := schemaLookup(c.root, ptr)
	if err != nil {
		return nil, fmt.Errorf("%s: $ref %q: %w", schemaPath(path), ref, err)
	}
	siblings := cloneSchemaMap(m)
	delete(siblings, "$ref")
	var conv any
	if _, kept := c.defs[c.defNames[ptr]]; kept && c.defNames[ptr] != "" {
		conv = map[string]any{"$ref": "#/$defs/" + c.defNames[ptr]} // converted once already
	} else if n := c.expanding[ptr]; n > 0 {
		c.recursive[ptr] = true
		switch c.format {
		case defscache.FormatAnthropic:
			if ptr == "" {
				conv = map[string]any{"$ref": "#"} // the converted root is the whole schema
				break
			}
			conv = map[string]any{"$ref": "#/$defs/" + c.defName(ptr)}
		default:
			if n >= openaiRecursionDepth {
				conv = c.leaf(target, ptr)
				c.problem(path, "recursive $ref %q inlined %d levels deep; deeper levels are not described", ref, openaiRecursionDepth)
				break
			}
		}
	}
	if conv == nil {
		c.expanding[ptr]++
		conv, err = c.convert(target, path)
		c.expanding[ptr]--
		if err != nil {
			return nil, err
		}
		if c.format == defscache.FormatAnthropic && c.recursive[ptr] && c.expanding[ptr] == 0 {
			// The outermost expansion of a recursive definition: keep it once
			// in $defs and refer to it.
			c.defs[c.defName(ptr)] = conv
			conv = map[string]any{"$ref": "#/$defs/" + c.defName(ptr)}
		}
	}
	if len(siblings) == 0 {
		return conv, nil
	}
	sib, err := c.convert(siblings, path)
	if err != nil {
		return nil, err
	}
	if cm, ok := conv.(map[string]any); ok && cm["$ref"] != nil {
		// A kept reference: its siblings stay beside it (2020-12 applies both).
		out := cloneSchemaMap(sib.(map[string]any))
		out["$ref"] = cm["$ref"]
		return out, nil
	}
	// The referring schema's own keywords (a description, a default) are more
	// specific than the definition's, so they win.
	return c.merge(sib.(map[string]any), conv, path), nil
}

// leaf stands for a recursive definition below the inlining limit.
func (c *schemaConverter) leaf(target any, ptr string) any {
	out := map[string]any{}
	name := ptr[strings.LastIndex(ptr, "/")+1:]
	if name == "" {
		name = "root"
	}
	desc := fmt.Sprintf("(A nested %s; its deeper levels are not described here.)", schemaUnescapePtr(name))
	if m, ok := target.(map[string]any); ok {
		if t, ok := m["type"]; ok {
			out["type"] = t
		}
		if d, ok := m["description"].(string); ok && d != "" {
			desc = d + " " + desc
		}
	}
	out["description"] = desc
	return out
}

// defName is the name of a recursive definition in the output's $defs:
// its own name when it came from $defs or definitions.
func (c *schemaConverter) defName(ptr string) string {
	if name, ok := c.defNames[ptr]; ok {
		return name
	}
	if c.defNames == nil {
		c.defNames = map[string]string{}
	}
	name := ptr
	for _, prefix := range []string{"/$defs/", "/definitions/"} {
		if rest, ok := strings.CutPrefix(ptr, prefix); ok && !strings.Contains(rest, "/") {
			name = rest
		}
	}
	name = schemaUnescapePtr(strings.Trim(strings.ReplaceAll(name, "/", "_"), "_"))
	if name == "" {
		name = "root"
	}
	base := name
	for i := 2; slices.Contains(slices.Collect(maps.Values(c.defNames)), name); i++ {
		name = base + strconv.Itoa(i)
	}
	c.defNames[ptr] = name
	return name
}

// resolvePointer turns a $ref into a JSON pointer into the root, refusing
// anything outside the document.
func (c *schemaConverter) resolvePointer(ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("$ref %q is not a URI reference: %v", ref, err)
	}
	if u.Scheme != "" || u.Host != "" || u.Path != "" || u.Opaque != "" {
		return "", fmt.Errorf("$ref %q points outside the schema; remote and file references are not fetched", ref)
	}
	frag := u.Fragment
	if frag == "" || strings.HasPrefix(frag, "/") {
		return frag, nil
	}
	if ptr, ok := c.anchors[frag]; ok {
		return ptr, nil
	}
	return "", fmt.Errorf("$ref %q: no anchor %q in the schema", ref, frag)
}

// findAnchors records "$anchor": "x", "$dynamicAnchor": "x" and draft-07's
// "$id": "#x" by pointer. Only schema positions are searched, so a
// "properties" key named "$anchor" is not mistaken for one.
func (c *schemaConverter) findAnchors(s any, ptr string) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a, ok := m[k].(string); ok {
			c.anchors[a] = ptr
		}
	}
	if id, ok := m["$id"].(string); ok && strings.HasPrefix(id, "#") {
		c.anchors[id[1:]] = ptr
	}
	for k, v := range m {
		switch {
		case slices.Contains(subschemaKeys, k):
			if list, ok := v.([]any); ok {
				for i, sub := range list {
					c.findAnchors(sub, ptr+"/"+k+"/"+strconv.Itoa(i))
				}
				continue
			}
			c.findAnchors(v, ptr+"/"+k)
		case slices.Contains(subschemaListKeys, k):
			list, _ := v.([]any)
			for i, sub := range list {
				c.findAnchors(sub, ptr+"/"+k+"/"+strconv.Itoa(i))
			}
		case slices.Contains(subschemaMapKeys, k) || k == "$defs" || k == "definitions":
			mm, _ := v.(map[string]any)
			for name, sub := range mm {
				c.findAnchors(sub, ptr+"/"+k+"/"+schemaEscapePtr(name))
			}
		}
	}
}

// schemaLookup follows a JSON pointer (RFC 6901, already percent-decoded).
func schemaLookup(root any, ptr string) (any, error) {
	if ptr == "" {
		return root, nil
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = schemaUnescapePtr(tok)
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, fmt.Errorf("no %q in the schema", ptr)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("no %q in the schema", ptr)
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("no %q in the schema", ptr)
		}
	}
	return cur, nil
}

// merge combines two converted schemas that must both hold (allOf), a into
// b's keywords; a's annotations win.
func (c *schemaConverter) merge(a map[string]any, b any, path string) map[string]any {
	bm, ok := b.(map[string]any)
	if !ok {
		if b == false {
			c.problem(path, "allOf branch is false: nothing can match; the branch is left out of the provider's copy")
		}
		return a
	}
	out := cloneSchemaMap(a)
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
			union := cloneSchemaMap(am)
			for name, bs := range bmm {
				if as, ok := union[name]; ok {
					if asm, ok := as.(map[string]any); ok {
						union[name] = c.merge(asm, bs, path+"/"+k+"/"+schemaEscapePtr(name))
						continue
					}
				}
				union[name] = bs
			}
			out[k] = union
		case "required":
			req := schemaList(av)
			for _, r := range schemaList(bv) {
				if !slices.Contains(req, r) {
					req = append(req, r)
				}
			}
			out[k] = req
		case "type":
			t, ok := schemaIntersectTypes(av, bv)
			if !ok {
				c.problem(path, "allOf branches want conflicting types %v and %v; kept %v", av, bv, av)
				continue
			}
			out[k] = t
		case "enum":
			var both []any
			for _, x := range schemaList(av) {
				if slices.ContainsFunc(schemaList(bv), func(y any) bool { return reflect.DeepEqual(x, y) }) {
					both = append(both, x)
				}
			}
			if len(both) == 0 {
				c.problem(path, "allOf branches have no enum value in common; kept the first list")
				continue
			}
			out[k] = both
		case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties":
			out[k] = schemaBound(av, bv, true)
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties":
			out[k] = schemaBound(av, bv, false)
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
			out["allOf"] = append(schemaList(out["allOf"]), map[string]any{"anyOf": bv})
		default:
			c.problem(path, "allOf branches disagree on %s (%v, %v); kept the first", k, schemaShort(av), schemaShort(bv))
		}
	}
	return out
}

// topLevelObject makes the root one object schema.
func (c *schemaConverter) topLevelObject(obj map[string]any) (map[string]any, error) {
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
		return nil, fmt.Errorf("input schema has type %s: want \"object\"", schemaShort(t))
	}
	return obj, nil
}

// flattenUnion folds a top-level anyOf of object schemas into obj:
// properties are the union, required the intersection.
func (c *schemaConverter) flattenUnion(obj map[string]any, branches []any) map[string]any {
	props, _ := obj["properties"].(map[string]any)
	props = cloneSchemaMap(props)
	var required []any
	var sets []string // each branch's required names, to tell the model
	first := true
	n := 0
	for i, b := range branches {
		bm, ok := b.(map[string]any)
		if !ok {
			continue
		}
		if t, ok := bm["type"]; ok && t != "object" && !slices.Contains(schemaList(t), any("object")) {
			c.problem(fmt.Sprintf("/anyOf/%d", i), "branch of type %v can never match an arguments object; left out", t)
			continue
		}
		n++
		bp, _ := bm["properties"].(map[string]any)
		for name, s := range bp {
			if old, ok := props[name]; ok && !reflect.DeepEqual(old, s) {
				props[name] = map[string]any{"anyOf": []any{old, s}}
				if oa, ok := old.(map[string]any); ok && oa["anyOf"] != nil && len(oa) == 1 {
					props[name] = map[string]any{"anyOf": append(schemaList(oa["anyOf"]), s)}
				}
				continue
			}
			props[name] = s
		}
		req := schemaList(bm["required"])
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
	for _, r := range schemaList(obj["required"]) {
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

func schemaIntersectTypes(a, b any) (any, bool) {
	as, bs := schemaList(a), schemaList(b)
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

// schemaBound picks the tighter of two numeric bounds.
func schemaBound(a, b any, lower bool) any {
	af, aerr := schemaFloat(a)
	bf, berr := schemaFloat(b)
	if aerr != nil || berr != nil {
		return a
	}
	if (lower && bf > af) || (!lower && bf < af) {
		return b
	}
	return a
}

func schemaFloat(v any) (float64, error) {
	switch n := v.(type) {
	case json.Number:
		return n.Float64()
	case float64:
		return n, nil
	}
	return 0, fmt.Errorf("not a number")
}

func schemaList(v any) []any {
	switch l := v.(type) {
	case []any:
		return slices.Clone(l)
	case nil:
		return nil
	}
	return []any{v}
}

func cloneSchemaMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func schemaShort(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

func schemaKind(v any) string {
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

func schemaPath(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func schemaEscapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func schemaUnescapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
