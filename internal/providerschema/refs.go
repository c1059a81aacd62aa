package providerschema

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ref inlines the target of ref into m's other keywords.
func (c *conversion) ref(m map[string]any, ref, path string) (any, error) {
	ptr, err := c.resolvePointer(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pathOrRoot(path), err)
	}
	target, err := lookupPointer(c.root, ptr)
	if err != nil {
		return nil, fmt.Errorf("%s: $ref %q: %w", pathOrRoot(path), ref, err)
	}
	siblings := cloneMap(m)
	delete(siblings, "$ref")
	var conv any
	if _, kept := c.defs[c.defNames[ptr]]; kept && c.defNames[ptr] != "" {
		conv = map[string]any{"$ref": "#/$defs/" + c.defNames[ptr]} // converted once already
	} else if n := c.expanding[ptr]; n > 0 {
		c.recursive[ptr] = true
		switch c.format {
		case Anthropic:
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
		if c.format == Anthropic && c.recursive[ptr] && c.expanding[ptr] == 0 {
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
		out := cloneMap(sib.(map[string]any))
		out["$ref"] = cm["$ref"]
		return out, nil
	}
	// The referring schema's own keywords (a description, a default) are more
	// specific than the definition's, so they win.
	return c.merge(sib.(map[string]any), conv, path), nil
}

// leaf stands for a recursive definition below the inlining limit.
func (c *conversion) leaf(target any, ptr string) any {
	out := map[string]any{}
	name := ptr[strings.LastIndex(ptr, "/")+1:]
	if name == "" {
		name = "root"
	}
	desc := fmt.Sprintf("(A nested %s; its deeper levels are not described here.)", unescapePointer(name))
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
func (c *conversion) defName(ptr string) string {
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
	name = unescapePointer(strings.Trim(strings.ReplaceAll(name, "/", "_"), "_"))
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
func (c *conversion) resolvePointer(ref string) (string, error) {
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
func (c *conversion) findAnchors(s any, ptr string) {
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
				c.findAnchors(sub, ptr+"/"+k+"/"+escapePointer(name))
			}
		}
	}
}

// lookupPointer follows a JSON pointer (RFC 6901, already percent-decoded).
func lookupPointer(root any, ptr string) (any, error) {
	if ptr == "" {
		return root, nil
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = unescapePointer(tok)
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

func pathOrRoot(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
