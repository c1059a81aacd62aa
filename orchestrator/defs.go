package orchestrator

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/providerschema"
)

// DefsProblem is a tool whose input schema could not be converted for a
// provider format (the tool is left out of that format's array), or was
// converted with a warning.
type DefsProblem struct {
	Format  defscache.Format
	ToolID  string
	Message string
	Dropped bool // the tool is missing from the array
}

// DefsOptions configures DefsSource. A nil *DefsOptions means defaults.
type DefsOptions struct {
	// Converter converts the tools' input schemas and memoizes them; nil
	// means one of the source's own, with the default memo bound.
	Converter *providerschema.Converter
	Logger    *slog.Logger
	// OnProblem, if set, is told about every conversion problem of every
	// build (besides the log).
	OnProblem func(DefsProblem)
	// Deferred, if set, reports the tools to leave out of the array
	// (defscache.Def.Deferred): the model finds them with tool_search.
	// Built-ins are never deferred.
	Deferred func(*Tool) bool
}

// DefsSource returns the defscache.Source that builds provider definitions
// from the registry: every tool under its provider-facing name (the alias
// when its id is too long), with its schema converted for the format.
// Nothing is silently collapsed: a schema that cannot be converted drops
// that one tool from that format and is reported.
func DefsSource(r *Registry, opts *DefsOptions) defscache.Source {
	logger := slog.New(slog.DiscardHandler)
	var onProblem func(DefsProblem)
	var conv *providerschema.Converter
	var deferred func(*Tool) bool
	if opts != nil {
		if opts.Logger != nil {
			logger = opts.Logger
		}
		onProblem = opts.OnProblem
		conv = opts.Converter
		deferred = opts.Deferred
	}
	if conv == nil {
		conv = providerschema.New(nil)
	}
	report := func(p DefsProblem) {
		logger.Warn("tool schema conversion", "format", p.Format, "tool", p.ToolID, "problem", p.Message, "dropped", p.Dropped)
		if onProblem != nil {
			onProblem(p)
		}
	}
	return func(ctx context.Context, f defscache.Format) ([]defscache.Def, error) {
		tools := r.Tools("")
		defs := make([]defscache.Def, 0, len(tools))
		names := make(map[string]string, len(tools)) // provider name → id
		for _, t := range tools {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if !t.offeredToModels() {
				continue // awaiting review, or for its server's app alone: no model may see it
			}
			// The registry keeps provider names unique; should two ever
			// meet, one tool is left out and reported rather than the
			// whole array failing to build.
			if other, dup := names[t.ProviderName()]; dup {
				report(DefsProblem{Format: f, ToolID: t.ID, Message: fmt.Sprintf("provider name %q is already %s's", t.ProviderName(), other), Dropped: true})
				continue
			}
			names[t.ProviderName()] = t.ID
			in := t.InputSchema
			if t.noSchema {
				in = nil // let the conversion report it
			}
			schema, warnings, err := conv.Convert(providerschema.Format(f), in)
			if err != nil {
				report(DefsProblem{Format: f, ToolID: t.ID, Message: err.Error(), Dropped: true})
				continue
			}
			if len(warnings) > 0 {
				report(DefsProblem{Format: f, ToolID: t.ID, Message: strings.Join(warnings, "; ")})
			}
			defs = append(defs, defscache.Def{
				Name:        t.ProviderName(),
				Description: t.Description,
				Schema:      schema,
				Canonical:   true, // the converter writes canonjson
				Builtin:     t.Builtin,
				Order:       t.Order,
				Server:      t.Server,
				Tool:        t.Name,
				Deferred:    !t.Builtin && deferred != nil && deferred(t),
			})
		}
		return defs, nil
	}
}
