package orchestrator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Validator checks a tool's arguments against its whole input schema (not
// the provider's converted copy). It is safe for concurrent use.
type Validator struct {
	schema *jsonschema.Schema
}

// FieldError is one reason arguments are invalid.
type FieldError struct {
	// Path is the JSON pointer of the offending value in the arguments
	// ("" is the arguments object itself). A missing required property is
	// reported at its parent, with the property named in Message.
	Path    string
	Message string
}

// ValidationError lists every reason arguments are invalid, sorted by path.
type ValidationError struct {
	Errors []FieldError
}

// Error gives one line the model can act on: "invalid arguments: /labels/0:
// missing required property "name"; /count: want integer, got string".
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("invalid arguments: ")
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(cmp.Or(fe.Path, "/"))
		b.WriteString(": ")
		b.WriteString(fe.Message)
	}
	return b.String()
}

// schemaResourceURL names the tool's schema inside the compiler. It has no
// scheme any loader serves, so a relative $ref resolves to a URL that is
// refused rather than to a file.
const schemaResourceURL = "freecode:///tool-input-schema.json"

// errRefNotLoaded is what every attempt to load a referenced document gets.
var errRefNotLoaded = errors.New("schemas outside the tool's input schema are not loaded (remote and file $ref are blocked)")

// refusingLoader is the compiler's only loader: tool schemas come from
// untrusted servers, and a $ref must not make the sidecar fetch a URL or read
// a local file. The JSON Schema meta-schemas are built into the library and
// need no loader.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) { return nil, errRefNotLoaded }

// NewValidator compiles schema. The draft comes from its "$schema" (draft-04
// to 2020-12); without one, 2020-12. An absent or null schema accepts any
// arguments object.
func NewValidator(schema json.RawMessage) (*Validator, error) {
	schema = bytes.TrimSpace(schema)
	if len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaResourceURL, doc); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	sch, err := c.Compile(schemaResourceURL)
	if err != nil {
		return nil, fmt.Errorf("compiling input schema: %w", err)
	}
	return &Validator{schema: sch}, nil
}

// Validate checks args: a value as encoding/json decodes it (maps, slices,
// strings, float64 or json.Number, bools, nil), or a json.RawMessage / []byte
// holding the JSON. The error, when not nil, is a *ValidationError with every
// problem found.
func (v *Validator) Validate(args any) error {
	switch raw := args.(type) {
	case json.RawMessage:
		return v.validateRaw(raw)
	case []byte:
		return v.validateRaw(raw)
	}
	err := v.schema.Validate(args)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ValidationError{Errors: []FieldError{{Message: err.Error()}}}
	}
	var out ValidationError
	flattenValidation(ve, &out.Errors)
	slices.SortStableFunc(out.Errors, func(a, b FieldError) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
	out.Errors = slices.Compact(out.Errors)
	return &out
}

func (v *Validator) validateRaw(raw []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &ValidationError{Errors: []FieldError{{Message: "arguments are not JSON: " + err.Error()}}}
	}
	return v.Validate(doc)
}

var validationPrinter = message.NewPrinter(language.English)

// maxAlternativeText bounds the text that explains why no anyOf/oneOf
// branch matched.
const maxAlternativeText = 400

// flattenValidation appends the leaves of the library's error tree. Wrappers
// (a group, allOf, a $ref) are looked through; a failed anyOf/oneOf is one
// error at its own path that sums up why each alternative failed, since the
// model must fix the value as a whole.
func flattenValidation(e *jsonschema.ValidationError, out *[]FieldError) {
	path := argsPointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if len(e.Causes) == 0 { // oneOf with several matches
			*out = append(*out, FieldError{Path: path, Message: validationMessage(e.ErrorKind)})
			return
		}
		var alts []string
		for i, c := range e.Causes {
			var sub []FieldError
			flattenValidation(c, &sub)
			var parts []string
			for _, s := range sub {
				if rel := strings.TrimPrefix(s.Path, path); rel != "" {
					parts = append(parts, rel+": "+s.Message)
				} else {
					parts = append(parts, s.Message)
				}
			}
			alts = append(alts, fmt.Sprintf("#%d %s", i+1, strings.Join(parts, ", ")))
		}
		msg := fmt.Sprintf("matches none of the %d allowed alternatives (%s)", len(e.Causes), strings.Join(alts, "; "))
		if len(msg) > maxAlternativeText {
			msg = msg[:maxAlternativeText] + "…)"
		}
		*out = append(*out, FieldError{Path: path, Message: msg})
		return
	case *kind.Required:
		for _, p := range k.Missing {
			*out = append(*out, FieldError{Path: path, Message: fmt.Sprintf("missing required property %q", p)})
		}
		return
	case *kind.Contains, *kind.MinContains, *kind.PropertyNames:
		// The causes are every item (or name) that failed, yet one match
		// (or the name alone) is what matters: one error here.
		*out = append(*out, FieldError{Path: path, Message: validationMessage(e.ErrorKind)})
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, FieldError{Path: path, Message: fmt.Sprintf("unknown property %q (no other properties are allowed)", p)})
		}
		return
	}
	if len(e.Causes) == 0 {
		*out = append(*out, FieldError{Path: path, Message: validationMessage(e.ErrorKind)})
		return
	}
	for _, c := range e.Causes {
		flattenValidation(c, out)
	}
}

func validationMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("want %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.FalseSchema:
		return "no value is allowed here"
	}
	return k.LocalizedString(validationPrinter)
}

// argsPointer joins instance location tokens into a JSON pointer.
func argsPointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		// Escaped as RFC 6901 says; ReplaceAll allocates only when it
		// replaces something.
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
