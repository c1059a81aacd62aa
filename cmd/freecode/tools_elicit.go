package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
)

// With no frontend attached, the CLI answers what a server asks during a
// call itself: an elicitation on a terminal field by field, as the form's
// schema says (its defaults shown, Enter takes them); without a terminal
// it is declined. Sampling is refused: the CLI has no model of its own. A
// sign-in for more access is shown as `freecode mcp login` shows one, when
// someone can answer it: a terminal, or a $BROWSER to open.

// cliAsker is the Asker of the CLI's calls.
type cliAsker struct {
	term *termElicitor // nil: no terminal, an elicitation is declined
	out  io.Writer     // where a sign-in page is shown
	// signIn says someone can sign in for more access.
	signIn bool
}

var _ orchestrator.Asker = (*cliAsker)(nil)

// newCLIAsker returns the Asker of the CLI's calls, on the terminal in
// (nil: none), showing what it asks on out.
func newCLIAsker(in *bufio.Reader, out io.Writer) *cliAsker {
	a := &cliAsker{out: out, signIn: in != nil || os.Getenv("BROWSER") != ""}
	if in != nil {
		a.term = &termElicitor{in: in, out: out}
	}
	return a
}

func (a *cliAsker) Elicit(ctx context.Context, server, _ string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	if a.term == nil {
		return nil, errors.New("no terminal to ask on")
	}
	return a.term.elicit(ctx, server, p)
}

func (*cliAsker) Sample(context.Context, string, string, *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error) {
	return nil, &jsonrpc.Error{Code: mcp.CodeSamplingRejected,
		Message: "sampling refused: the freecode command line has no model to sample with; make the call from an editor attached to freecode-serve"}
}

// SignInOpener shows the sign-in page for more access to server in the
// middle of the call, as `freecode mcp login` signs in; nil when nobody
// can answer it.
func (a *cliAsker) SignInOpener(server string) func(ctx context.Context, url string) error {
	if !a.signIn {
		return nil
	}
	return func(ctx context.Context, u string) error {
		showSignIn(ctx, a.out, fmt.Sprintf("The MCP server %q asks for more access for this call: sign in in your browser to grant it.", server), u, false)
		return nil
	}
}

// termElicitor asks a server's questions on the terminal.
type termElicitor struct {
	in  *bufio.Reader
	out io.Writer
}

// errEOF is the terminal closed (Ctrl-D): the user cancelled.
var errEOF = errors.New("end of input")

// line reads one line within ctx. The read goes on in the background if
// ctx ends first; the terminal's next line is then lost with it.
func (e *termElicitor) line(ctx context.Context) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := e.in.ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil && (r.s == "" || !errors.Is(r.err, io.EOF)) {
			if errors.Is(r.err, io.EOF) {
				return "", errEOF
			}
			return "", r.err
		}
		return strings.TrimSpace(r.s), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (e *termElicitor) elicit(ctx context.Context, server string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	fmt.Fprintf(e.out, "\nServer %q asks: %s\n", termtext.Escape(server), termtext.EscapeLines(p.Message))
	if p.Mode == "url" {
		fmt.Fprintf(e.out, "  Open this address in a browser: %s\n", termtext.Escape(p.URL))
		fmt.Fprint(e.out, "Done? [y]es / [N]o (decline) / [c]ancel: ")
		return e.confirm(ctx, nil)
	}
	fields, err := formFields(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(e.out, "  (the form cannot be shown: %s; declined)\n", termtext.Escape(err.Error()))
		return &mcpsdk.ElicitResult{Action: "decline"}, nil
	}
	fmt.Fprintln(e.out, "  (Enter keeps the value in brackets; Ctrl-D cancels)")
	content := map[string]any{}
	for _, f := range fields {
		v, err := e.ask(ctx, f)
		if errors.Is(err, errEOF) {
			fmt.Fprintln(e.out)
			return &mcpsdk.ElicitResult{Action: "cancel"}, nil
		}
		if err != nil {
			return nil, err
		}
		if v != nil {
			content[f.name] = v
		}
	}
	fmt.Fprint(e.out, "Send? [Y]es / [n]o (decline) / [c]ancel: ")
	return e.confirm(ctx, content)
}

// confirm reads the user's last word on a question: content is sent on
// yes (or, with nil content, the URL was opened).
func (e *termElicitor) confirm(ctx context.Context, content map[string]any) (*mcpsdk.ElicitResult, error) {
	s, err := e.line(ctx)
	if errors.Is(err, errEOF) {
		return &mcpsdk.ElicitResult{Action: "cancel"}, nil
	}
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(s) {
	case "y", "yes":
		return &mcpsdk.ElicitResult{Action: "accept", Content: content}, nil
	case "":
		if content != nil {
			return &mcpsdk.ElicitResult{Action: "accept", Content: content}, nil
		}
	case "c", "cancel":
		return &mcpsdk.ElicitResult{Action: "cancel"}, nil
	}
	return &mcpsdk.ElicitResult{Action: "decline"}, nil
}

// formField is one property of an elicitation form: the schema's subset
// (string, number, integer, boolean, a single or multiple choice).
type formField struct {
	name, title, desc, typ, format string
	required                       bool
	def                            any
	choices                        []choice // enum, oneOf, or the items of a multiple choice
	multi                          bool
	min, max                       *float64
}

type choice struct{ value, title string }

// formFields reads the properties of an elicitation schema: the required
// ones first, in the order "required" lists them, then the others in the
// order of the schema as it reaches the CLI (the go-sdk hands it over as a
// map, so that is by name).
func formFields(schema any) ([]formField, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, err
	}
	var required []string
	for _, r := range s.Required {
		if slices.Contains(names, r) && !slices.Contains(required, r) {
			required = append(required, r)
		}
	}
	names = append(required, slices.DeleteFunc(names, func(n string) bool { return slices.Contains(required, n) })...)
	var props map[string]struct {
		Type        string          `json:"type"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		Format      string          `json:"format"`
		Default     any             `json:"default"`
		Enum        []any           `json:"enum"`
		EnumNames   []string        `json:"enumNames"`
		OneOf       []titledConst   `json:"oneOf"`
		Minimum     *float64        `json:"minimum"`
		Maximum     *float64        `json:"maximum"`
		Items       json.RawMessage `json:"items"`
	}
	if len(s.Properties) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, err
		}
	}
	var out []formField
	for _, n := range names {
		p := props[n]
		f := formField{name: n, title: p.Title, desc: p.Description, typ: p.Type, format: p.Format,
			required: slices.Contains(s.Required, n), def: p.Default, min: p.Minimum, max: p.Maximum}
		f.choices = choices(p.Enum, p.EnumNames, p.OneOf)
		if p.Type == "array" {
			var items struct {
				Enum  []any         `json:"enum"`
				AnyOf []titledConst `json:"anyOf"`
			}
			if len(p.Items) > 0 {
				if err := json.Unmarshal(p.Items, &items); err != nil {
					return nil, err
				}
			}
			f.multi, f.choices = true, choices(items.Enum, nil, items.AnyOf)
			if len(f.choices) == 0 {
				return nil, fmt.Errorf("field %s: a list without choices", n)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

type titledConst struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

func choices(enum []any, names []string, titled []titledConst) []choice {
	var out []choice
	for i, v := range enum {
		c := choice{value: fmt.Sprint(v)}
		if i < len(names) {
			c.title = names[i]
		}
		out = append(out, c)
	}
	for _, t := range titled {
		out = append(out, choice{value: fmt.Sprint(t.Const), title: t.Title})
	}
	return out
}

// objectKeys returns the keys of a JSON object in their order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("properties is not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// ask asks one field until its answer is valid; nil is no answer (an
// optional field left empty without a default).
func (e *termElicitor) ask(ctx context.Context, f formField) (any, error) {
	label := f.name
	if f.title != "" && f.title != f.name {
		label = f.title + " (" + f.name + ")"
	}
	fmt.Fprintf(e.out, "  %s", termtext.Escape(label))
	if f.desc != "" {
		fmt.Fprintf(e.out, ": %s", termtext.Escape(f.desc))
	}
	fmt.Fprintln(e.out)
	for i, c := range f.choices {
		t := c.value
		if c.title != "" {
			t = c.title + " (" + c.value + ")"
		}
		fmt.Fprintf(e.out, "     %d) %s\n", i+1, termtext.Escape(t))
	}
	for {
		fmt.Fprintf(e.out, "    %s%s: ", f.hint(), f.shownDefault())
		s, err := e.line(ctx)
		if err != nil {
			return nil, err
		}
		if s == "" {
			if f.def != nil {
				return f.def, nil
			}
			if !f.required {
				return nil, nil
			}
			fmt.Fprintln(e.out, "    required")
			continue
		}
		v, err := f.parse(s)
		if err != nil {
			fmt.Fprintf(e.out, "    %s\n", termtext.Escape(err.Error()))
			continue
		}
		return v, nil
	}
}

func (f formField) hint() string {
	var h string
	switch {
	case f.multi:
		h = "numbers, comma-separated"
	case len(f.choices) > 0:
		h = "number"
	case f.typ == "boolean":
		h = "y/n"
	default:
		h = f.typ
		if f.format != "" {
			h += ", " + f.format
		}
		if f.min != nil || f.max != nil {
			h += fmt.Sprintf(" %s..%s", bound(f.min), bound(f.max))
		}
	}
	if f.required {
		h += ", required"
	}
	return h
}

func bound(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func (f formField) shownDefault() string {
	if f.def == nil {
		return ""
	}
	b, _ := json.Marshal(f.def)
	return " [" + termtext.Escape(string(b)) + "]"
}

// parse turns what the user typed into the field's value.
func (f formField) parse(s string) (any, error) {
	pick := func(s string) (string, error) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > len(f.choices) {
			return "", fmt.Errorf("want a number from 1 to %d", len(f.choices))
		}
		return f.choices[n-1].value, nil
	}
	switch {
	case f.multi:
		var out []any
		for part := range strings.SplitSeq(s, ",") {
			v, err := pick(part)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case len(f.choices) > 0:
		return pick(s)
	}
	switch f.typ {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("want y or n")
	case "integer", "number":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || f.typ == "integer" && v != float64(int64(v)) {
			return nil, fmt.Errorf("want a %s", f.typ)
		}
		if f.min != nil && v < *f.min || f.max != nil && v > *f.max {
			return nil, fmt.Errorf("want a %s from %s to %s", f.typ, bound(f.min), bound(f.max))
		}
		return v, nil
	}
	return s, nil
}
