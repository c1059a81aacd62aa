package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors of Accept and Reject.
var (
	// ErrNoTool means the manifest neither lists nor pins the tool.
	ErrNoTool = errors.New("no such tool")
	// ErrStale means the tool's definition is no longer the one the
	// caller reviewed: the server changed it again.
	ErrStale = errors.New("the tool's definition changed again since it was shown")
	// ErrNothingToReview means the tool has no change to accept or reject.
	ErrNothingToReview = errors.New("nothing to review")
)

// Observe makes tools the server's current list. With pin set it pins
// what is not pinned yet: every tool of the first list (trust on first
// use), and afterwards each tool not seen before, marked New. It never
// changes a pin that exists: that takes the user (Accept). Pins of tools
// the server no longer lists are kept, so that a tool that goes and comes
// back changed is caught. Tools whose definition cannot be taken (a
// schema that is not JSON) are left out of the list.
func (m *Manifest) Observe(tools []*mcpsdk.Tool, pin bool) error {
	m.Tools = make([]*mcpsdk.Tool, 0, len(tools))
	defs := make(map[string]Def, len(tools))
	var errs []error
	for _, t := range tools {
		if t == nil || t.Name == "" {
			continue
		}
		if _, dup := defs[t.Name]; dup {
			continue
		}
		d, err := DefOf(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		defs[t.Name] = d
		m.Tools = append(m.Tools, t)
	}
	if !pin {
		return errors.Join(errs...)
	}
	if m.Pins == nil {
		m.Pins = make(map[string]*Pin, len(defs))
	}
	first := !m.Pinned
	for name, d := range defs {
		if _, ok := m.Pins[name]; !ok {
			m.Pins[name] = &Pin{Def: d, New: !first}
		}
	}
	m.Pinned = true
	return errors.Join(errs...)
}

// ToolStatus is one tool's standing against its pin.
type ToolStatus struct {
	Name string
	// Pinned is the accepted definition; nil when the tool is not pinned
	// (pinning was off for it).
	Pinned *Def
	// Current is the definition the server lists; nil when it no longer
	// lists the tool.
	Current *Def
	// Hash is Current's hash ("" without one).
	Hash string
	// New: the tool was first seen on a server already pinned, and the
	// user has not accepted it yet.
	New bool
	// Changed: the server lists a definition other than the pinned one.
	Changed bool
	// Rejected: the user rejected the very definition listed.
	Rejected bool
}

// NeedsReview reports whether the user has something to accept or reject:
// a tool listed that is new or changed, and not rejected as it is.
func (s ToolStatus) NeedsReview() bool {
	return s.Current != nil && (s.New || s.Changed) && !s.Rejected
}

// Pending returns the changes that await review, by tool name: each tool
// whose listed definition differs from the one accepted, or that is new.
func (m *Manifest) Pending() []*Change {
	var out []*Change
	for _, st := range m.Statuses() {
		switch {
		case !st.NeedsReview():
		case st.Changed:
			out = append(out, Diff(st.Pinned, st.Current))
		default:
			out = append(out, Diff(nil, st.Current))
		}
	}
	return out
}

// Statuses returns the standing of every tool listed or pinned, by name.
func (m *Manifest) Statuses() []ToolStatus {
	byName := make(map[string]*ToolStatus)
	get := func(name string) *ToolStatus {
		if s, ok := byName[name]; ok {
			return s
		}
		s := &ToolStatus{Name: name}
		byName[name] = s
		return s
	}
	for _, t := range m.Tools {
		d, err := DefOf(t)
		if err != nil {
			continue // Observe and decode keep such tools out
		}
		s := get(t.Name)
		s.Current, s.Hash = &d, d.Hash()
	}
	for name, p := range m.Pins {
		s := get(name)
		def := p.Def
		s.Pinned = &def
		s.New = p.New
		if s.Current != nil {
			s.Changed = s.Hash != def.Hash()
			s.Rejected = p.Rejected != "" && p.Rejected == s.Hash
		}
	}
	out := make([]ToolStatus, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	return out
}

// Status returns the standing of the tool name.
func (m *Manifest) Status(name string) (ToolStatus, bool) {
	for _, s := range m.Statuses() {
		if s.Name == name {
			return s, true
		}
	}
	return ToolStatus{}, false
}

// Accept makes the listed definition of the tool name its pin, if hash is
// "" or that definition's hash (the one the user was shown). A tool the
// server no longer lists loses its pin. With name "" every listed tool is
// pinned as listed and the pins of tools no longer listed go.
func (m *Manifest) Accept(name, hash string) error {
	if name == "" {
		pins := make(map[string]*Pin, len(m.Tools))
		for _, t := range m.Tools {
			d, err := DefOf(t)
			if err != nil {
				continue
			}
			pins[t.Name] = &Pin{Def: d}
		}
		m.Pins, m.Pinned = pins, true
		return nil
	}
	s, ok := m.Status(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoTool, name)
	}
	if s.Current == nil {
		delete(m.Pins, name)
		return nil
	}
	if hash != "" && hash != s.Hash {
		return fmt.Errorf("%s: %w", name, ErrStale)
	}
	if m.Pins == nil {
		m.Pins = map[string]*Pin{}
	}
	m.Pins[name] = &Pin{Def: *s.Current}
	m.Pinned = true
	return nil
}

// Reject records that the user refuses the listed definition of the tool
// name (hash as in Accept); its pin stays. A rejected definition is never
// offered to a model nor called, until the server lists another one or
// the user accepts it after all. With name "" every tool that needs
// review is rejected.
func (m *Manifest) Reject(name, hash string) error {
	if name == "" {
		for _, s := range m.Statuses() {
			if s.NeedsReview() {
				m.Pins[s.Name].Rejected = s.Hash
			}
		}
		return nil
	}
	s, ok := m.Status(name)
	switch {
	case !ok:
		return fmt.Errorf("%w: %q", ErrNoTool, name)
	case hash != "" && hash != s.Hash:
		return fmt.Errorf("%s: %w", name, ErrStale)
	case s.Rejected:
		return nil
	case !s.NeedsReview():
		return fmt.Errorf("%s: %w", name, ErrNothingToReview)
	}
	m.Pins[name].Rejected = s.Hash
	return nil
}

// Shown returns the tool live (the definition the server lists) as a
// model is to be shown it, given its standing s, and whether it is
// offered to a model at all:
//
//   - pinned and unchanged: live as it is;
//   - new (listed by a server whose tools were pinned already): never
//     offered until accepted, and its readOnlyHint not honoured, since
//     trust on first use covers the server's first sight only;
//   - changed: the pinned definition, with each annotation the safer of
//     the two (read-only and idempotent only if both say so, destructive
//     and open-world if either does), so a flip of readOnlyHint to true
//     never takes effect unasked; offered only when a call made by the
//     pinned input schema is one the live schema accepts too
//     (InputCompatible), since otherwise the model would be shown a tool
//     it cannot call;
//   - rejected: never offered.
func Shown(live *mcpsdk.Tool, s ToolStatus) (*mcpsdk.Tool, bool) {
	switch {
	case s.Rejected:
		t := *live
		t.Annotations = safer(s.Pinned, s.Current)
		return &t, false
	case s.Changed && s.Pinned != nil:
		p := s.Pinned
		t := *live
		t.Title, t.Description = p.Title, p.Description
		t.InputSchema, t.OutputSchema = nil, nil
		if p.InputSchema != nil {
			t.InputSchema = p.InputSchema
		}
		if p.OutputSchema != nil {
			t.OutputSchema = p.OutputSchema
		}
		t.Annotations = safer(s.Pinned, s.Current)
		if p.HiddenFromModel && !s.Current.HiddenFromModel {
			// Declared for the app alone when accepted: it stays so,
			// for the model's calls too, until the change is accepted.
			t.Meta = appOnly(live.Meta)
			return &t, false
		}
		if !InputCompatible(p.InputSchema, s.Current.InputSchema) {
			// What is offered nowhere is validated against what the
			// server takes, should the user allow a call by its id.
			t.InputSchema = live.InputSchema
			return &t, false
		}
		return &t, true
	case s.New:
		t := *live
		a := ToolAnnotations(s.Current.Annotations)
		a.ReadOnlyHint = false
		t.Annotations = a
		return &t, false
	}
	return live, true
}

// appOnly returns meta with its _meta.ui.visibility set to the app's
// alone, the rest as it was (meta itself is not changed).
func appOnly(meta map[string]any) map[string]any {
	out := maps.Clone(meta)
	if out == nil {
		out = map[string]any{}
	}
	ui, _ := out["ui"].(map[string]any)
	ui = maps.Clone(ui)
	if ui == nil {
		ui = map[string]any{}
	}
	ui["visibility"] = []any{"app"}
	out["ui"] = ui
	return out
}

// safer returns the annotations of the pinned and current definitions
// merged to the safer value of each hint; the title is the pinned one.
func safer(pinned, current *Def) *mcpsdk.ToolAnnotations {
	switch {
	case pinned == nil && current == nil:
		return nil
	case pinned == nil:
		a := ToolAnnotations(current.Annotations)
		a.ReadOnlyHint = false
		return a
	case current == nil:
		return ToolAnnotations(pinned.Annotations)
	}
	p, c := pinned.Annotations, current.Annotations
	return ToolAnnotations(Annotations{
		Title:       p.Title,
		ReadOnly:    p.ReadOnly && c.ReadOnly,
		Destructive: p.Destructive || c.Destructive,
		Idempotent:  p.Idempotent && c.Idempotent,
		OpenWorld:   p.OpenWorld || c.OpenWorld,
	})
}

// ToolAnnotations returns a as the go-sdk's annotations, every hint spelt
// out.
func ToolAnnotations(a Annotations) *mcpsdk.ToolAnnotations {
	destructive, openWorld := a.Destructive, a.OpenWorld
	return &mcpsdk.ToolAnnotations{
		Title:           a.Title,
		ReadOnlyHint:    a.ReadOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  a.Idempotent,
		OpenWorldHint:   &openWorld,
	}
}
