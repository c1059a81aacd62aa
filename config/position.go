package config

import (
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// positions finds where a key such as "mcp.servers[2].timeout" is in the
// file as written, so that a problem points at its line and column rather
// than at the top of the file. It walks the parse of the original bytes
// (before standardizing, which would move every offset).
type positions struct {
	data []byte
	root *hujson.Value
}

// at returns the 1-based line and column of key's value, or of its name
// when name is true (a key FreeCode does not know is reported at its
// name). A key that cannot be followed to its end is placed at the deepest
// part of it that exists, so a problem is never further from its cause than
// the entry that holds it; 0, 0 when nothing of it exists.
func (p *positions) at(key string, name bool) (line, col int) {
	if p == nil || p.root == nil {
		return 0, 0
	}
	v := p.root
	var nameAt *hujson.Value
	found := false
	for _, seg := range splitKey(key) {
		next, nv := child(v, seg)
		if next == nil {
			nameAt = nil
			break
		}
		v, nameAt, found = next, nv, true
	}
	if !found {
		return 0, 0
	}
	off := v.StartOffset
	if name && nameAt != nil {
		off = nameAt.StartOffset
	}
	return offsetLineCol(p.data, off)
}

// child returns the member seg of object v (and the member's name), or the
// element seg ("[3]") of array v. Of a key written twice, it is the last,
// the one decoded.
func child(v *hujson.Value, seg string) (val, name *hujson.Value) {
	switch c := v.Value.(type) {
	case *hujson.Object:
		for i := len(c.Members) - 1; i >= 0; i-- {
			m := &c.Members[i]
			if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == seg {
				return &m.Value, &m.Name
			}
		}
	case *hujson.Array:
		if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(seg, "["), "]")); err == nil && strings.HasPrefix(seg, "[") && n >= 0 && n < len(c.Elements) {
			return &c.Elements[n], nil
		}
	}
	return nil, nil
}

// splitKey splits "mcp.servers[2].env.A" into "mcp", "servers", "[2]",
// "env", "A".
func splitKey(key string) []string {
	var out []string
	for part := range strings.SplitSeq(key, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				break
			}
			out = append(out, part[i:i+j+1])
			part = part[i+j+1:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}
