package config

import (
	"fmt"

	"github.com/tailscale/hujson"
)

// duplicates warns of each key written twice in one object of what this
// package reads: "mcp" at the top, and every object inside it. JSON leaves
// a repeated key undefined; encoding/json, which decodes the file, takes
// the last one, so the warning says so, at the repeat, naming where the
// first one is. A settings file's other keys are someone else's to check.
func (d *decoder) duplicates() {
	top, ok := d.pos.root.Value.(*hujson.Object)
	if !ok {
		return
	}
	d.dupObject(top, "", "", func(name string) bool { return name == keyMCP })
}

// dupObject checks obj, at key prefix, in the server entry named server
// (if any), for the members only lets through (nil: all), and what they
// hold.
func (d *decoder) dupObject(obj *hujson.Object, prefix, server string, only func(string) bool) {
	first := map[string]*hujson.Value{}
	for i := range obj.Members {
		m := &obj.Members[i]
		name := m.Name.Value.(hujson.Literal).String()
		if only != nil && !only(name) {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		if f, ok := first[name]; ok {
			line, col := offsetLineCol(d.pos.data, m.Name.StartOffset)
			fl, fc := offsetLineCol(d.pos.data, f.StartOffset)
			d.warnings = append(d.warnings, Problem{Key: key, Server: server, Line: line, Col: col, Warning: true,
				Msg: fmt.Sprintf("duplicate key %q (the first is at line %d, column %d): the last one counts", name, fl, fc)})
		} else {
			first[name] = &m.Name
		}
		d.dupValue(&m.Value, key, server)
	}
}

func (d *decoder) dupValue(v *hujson.Value, key, server string) {
	switch x := v.Value.(type) {
	case *hujson.Object:
		d.dupObject(x, key, server, nil)
	case *hujson.Array:
		for i := range x.Elements {
			s := server
			if key == keyMCP+"."+keyServers {
				s = entryName(&x.Elements[i])
			}
			d.dupValue(&x.Elements[i], fmt.Sprintf("%s[%d]", key, i), s)
		}
	}
}

// entryName returns the name of the server entry v, as decoded (the last
// "name"), or "".
func entryName(v *hujson.Value) string {
	name := ""
	if obj, ok := v.Value.(*hujson.Object); ok {
		for _, m := range obj.Members {
			if lit, ok := m.Value.Value.(hujson.Literal); ok && m.Name.Value.(hujson.Literal).String() == "name" && lit.Kind() == '"' {
				name = lit.String()
			}
		}
	}
	return name
}
