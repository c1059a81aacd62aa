package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/permissions"
	"github.com/freecode/freecode/workspace"
)

// The drift test: each conversion of this package is given a value whose
// every field is filled, and
//
//   - every field of what it returns must be filled: a wire field that the
//     conversion forgets to set, or that the value cannot tell, fails;
//   - every field of the value must reach what it returns: each is changed
//     alone, and the JSON sent must change with it. A field added to a
//     domain type and not converted fails, unless it is listed among the
//     fields the wire leaves out, with why.
//
// Fields are walked into where they are the module's own structs (and a
// few of the go-sdk's that are converted field by field); anything else is
// one field, filled by its kind or by the fillers below.

// A conversion is one function of the package, on a value of its own.
type conversion struct {
	// in is the type converted.
	in reflect.Type
	// convert converts a value of type in.
	convert func(in any) (any, error)
	// unsent are the fields of in that the wire leaves out, each with why.
	unsent map[string]string
	// zeroOK are the fields of the result a filled value leaves zero, each
	// with why.
	zeroOK map[string]string
	// values are the two values of the fields where any other value would
	// not tell whether the field is converted (a level the conversion
	// folds), by path.
	values map[string][2]any
}

// conv makes the conversion of f.
func conv[D, W any](f func(D) W) conversion {
	return conversion{in: reflect.TypeFor[D](), convert: func(in any) (any, error) { return f(in.(D)), nil }}
}

// convErr makes the conversion of f, which may fail.
func convErr[D, W any](f func(D) (W, error)) conversion {
	return conversion{in: reflect.TypeFor[D](), convert: func(in any) (any, error) { return f(in.(D)) }}
}

func (c conversion) leavesOut(unsent map[string]string) conversion {
	c.unsent = unsent
	return c
}

func (c conversion) mayBeZero(zeroOK map[string]string) conversion {
	c.zeroOK = zeroOK
	return c
}

func (c conversion) with(values map[string][2]any) conversion {
	c.values = values
	return c
}

// The arguments of the conversions that take more than one.
type (
	projectArgs struct {
		Info     workspace.ProjectInfo
		Problems []workspace.ProblemsEvent
	}
	progressArgs struct {
		CallID   string
		Progress orchestrator.Progress
	}
	// taskArgs is a task told to the frontend of To; filled, To is its
	// owner (the same Asker), which sees the whole of it.
	taskArgs struct {
		Task workspace.TaskInfo
		To   orchestrator.Asker
	}
)

// frontend stands for a frontend's Asker: the filler's are told apart by
// pointer, and never asked.
type frontend struct{ orchestrator.Asker }

// frontends are the Askers the filler gives, for seed 1 or 2: the
// frontends a task is of and told to.
var frontends = [2]*frontend{{}, {}}

// problemsUnsent are the fields of a ProblemsEvent that
// freecode/config/problems does not carry.
var problemsUnsent = map[string]string{
	"Err":      "the error the problems were read from: they say it, line and column included",
	"RulesErr": "as Err, for the rules",
}

func prefixed(prefix string, m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[prefix+k] = v
	}
	return out
}

// allowedByEffect is why ToolInfo.allowedBy does not say its rule's effect.
const allowedByEffect = "the rule that lets a tool run unasked is an allow rule: the field's name says it"

// conversions are every conversion of the package, by function name.
var conversions = map[string]conversion{
	"ServerStatus": conv(ServerStatus).leavesOut(map[string]string{
		"Approval.RunSettings.Pinning": "a project cannot turn pinning off (config refuses the key in a project's settings), so an approval never shows it",
	}).with(map[string][2]any{
		"LastErrorKind": {mcp.FailureExited, mcp.FailureTimeout}, // a kind past the names is "other"
	}),
	"Project": conv(func(a projectArgs) protocol.Project { return Project(a.Info, a.Problems) }).
		leavesOut(prefixed("Problems[0].", problemsUnsent)),
	"ConfigProblems": conv(ConfigProblems).leavesOut(problemsUnsent),
	"RulesReview":    conv(RulesReview),
	"Rule": conv(Rule).leavesOut(map[string]string{
		"File": "the rule file's path stays on this side; Source says which file it is",
	}),
	"Hashes":           conv(Hashes),
	"ToolsChanged":     conv(ToolsChanged),
	"ResourcesChanged": conv(ResourcesChanged),
	"PromptsChanged":   conv(PromptsChanged),
	"ServerLog": conv(ServerLog).with(map[string][2]any{
		"Level": {"warning", "error"}, // any level but these few is info
	}),
	"ToolInfo": conv(ToolInfo).leavesOut(map[string]string{
		"OutputSchema":     "FreeCode's MCP server lists it; frontends are not told",
		"Hidden":           "whether models are shown the tool: a frontend lists it all the same, marked definitionChanged or new",
		"AllowedBy.Effect": allowedByEffect,
	}).with(map[string][2]any{
		"UI.Visibility": {[]string{"model"}, []string{"app"}}, // audiences: other words are dropped
	}),
	"AllowedBy": conv(AllowedBy).leavesOut(map[string]string{"Effect": allowedByEffect}),
	"ToolUI": conv(ToolUI).with(map[string][2]any{
		"Visibility": {[]string{"model"}, []string{"app"}},
	}),
	"ToolCall": conv(ToolCall),
	"ToolResult": convErr(ToolResult).mayBeZero(map[string]string{
		"Task.Result": "the task of a call has just started: its result comes in freecode/tasks/changed",
		"Task.Error":  "the task of a call has just started: a failure comes in freecode/tasks/changed",
	}),
	"TaskInfo": convErr(func(a taskArgs) (protocol.TaskInfo, error) { return TaskInfo(a.Task, a.To) }).leavesOut(prefixed("Task.", map[string]string{
		"Result.CallID":             "the task's CallID says it",
		"Result.Decision":           "the call's result, when the task started, said it",
		"Result.DurationMs":         "CreatedAt and UpdatedAt say it",
		"Result.OutcomeUnknown":     "a task's result is one its server answered",
		"Result.Task.Server":        "the task is the one the result is of",
		"Result.Task.ID":            "the task is the one the result is of",
		"Result.Task.Tool":          "the task is the one the result is of",
		"Result.Task.Status":        "the task is the one the result is of",
		"Result.Task.StatusMessage": "the task is the one the result is of",
		"Result.Task.CreatedAt":     "the task is the one the result is of",
	})),
	"ToolProgress": conv(func(a progressArgs) protocol.ToolProgress { return ToolProgress(a.CallID, a.Progress) }),
	"PermissionRequest": conv(PermissionRequest).leavesOut(map[string]string{
		"Destructive": "the CLI's prompt words it; a frontend reads the tool's annotations from freecode/tools (ToolInfo)",
		"Annotated":   "the CLI's prompt words it; a frontend reads the tool's annotations from freecode/tools (ToolInfo)",
	}),
	"Answer":           conv(Answer),
	"ToolReview":       conv(ToolReview),
	"PermissionReview": conv(PermissionReview),
	"DefinitionChange": conv(DefinitionChange),
	"ResourceInfo":     conv(ResourceInfo),
	"PromptInfo":       conv(PromptInfo),
	"RegistryEntry":    conv(RegistryEntry),
	"RegistryValue":    conv(RegistryValue),
	"RegistryIdentity": conv(RegistryIdentity),
}

func TestEveryFieldReachesTheWire(t *testing.T) {
	for name, c := range conversions {
		t.Run(name, func(t *testing.T) {
			f := &filler{t: t, values: c.values}
			want, err := c.convert(f.value(c.in, ""))
			if err != nil {
				t.Fatal(err)
			}
			wantJSON := encode(t, want)

			// Every field of the result is filled.
			var zero []string
			zeroPaths(reflect.ValueOf(want), "", &zero)
			for _, p := range zero {
				if c.zeroOK[p] == "" {
					t.Errorf("%s's %s is left zero, though every field of the %v converted is filled: convert it in server/wire", reflect.TypeOf(want), orWhole(p), c.in)
				}
			}
			for p := range c.zeroOK {
				if !slices.Contains(zero, p) {
					t.Errorf("%s is listed as left zero, but is filled", p)
				}
			}

			// Every field of the value reaches the JSON sent.
			paths := leafPaths(c.in, "", c.values, nil)
			for _, p := range paths {
				f := &filler{t: t, values: c.values, changed: p, changing: true}
				got, err := c.convert(f.value(c.in, ""))
				if err != nil {
					t.Fatalf("with %s changed: %v", p, err)
				}
				reaches := !bytes.Equal(encode(t, got), wantJSON)
				switch why := c.unsent[p]; {
				case !reaches && why == "":
					t.Errorf("%v's %s does not reach the wire: convert it in server/wire, or list it among the fields the wire leaves out, with why", c.in, orWhole(p))
				case reaches && why != "":
					t.Errorf("%v's %s is listed as left out (%s), but reaches the wire", c.in, p, why)
				}
			}
			for p := range c.unsent {
				if !slices.Contains(paths, p) {
					t.Errorf("%v has no field %s, which is listed as left out", c.in, p)
				}
			}
		})
	}
}

// Each format's hash reaches the wire: a format added to defscache needs
// its member in protocol.Hashes.
func TestEveryFormatsHashReachesTheWire(t *testing.T) {
	none := encode(t, Hashes(nil))
	for _, f := range defscache.Formats() {
		if bytes.Equal(encode(t, Hashes(map[defscache.Format]string{f: "h"})), none) {
			t.Errorf("the hash of format %q does not reach protocol.Hashes", f)
		}
	}
}

// Every exported function of the package is a conversion the drift test
// runs: one added without a case here fails.
func TestEveryConversionIsChecked(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var funcs []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() {
				funcs = append(funcs, fd.Name.Name)
			}
		}
	}
	if len(funcs) == 0 {
		t.Fatal("no exported functions found")
	}
	for _, name := range funcs {
		if _, ok := conversions[name]; !ok {
			t.Errorf("%s is not among the conversions the drift test checks", name)
		}
	}
	for name := range conversions {
		if !slices.Contains(funcs, name) {
			t.Errorf("the drift test checks %s, which the package does not have", name)
		}
	}
}

func orWhole(p string) string {
	if p == "" {
		return "value"
	}
	return p
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const module = "github.com/freecode/freecode/"

// walkedForeign are the structs outside the module walked into, since they
// are converted field by field.
var walkedForeign = map[reflect.Type]bool{
	reflect.TypeFor[mcpsdk.PromptArgument](): true,
}

// walked reports whether the fields of t are walked into.
func walked(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && (strings.HasPrefix(t.PkgPath(), module) || walkedForeign[t]) && fillers[t] == nil
}

// fillers make the values of the types whose kind says too little, for
// seed 1 or 2.
var fillers = map[reflect.Type]func(seed int) any{
	reflect.TypeFor[time.Time](): func(seed int) any {
		return time.Date(2026, 5, 1, 10, 0, seed, seed*int(time.Millisecond), time.UTC)
	},
	reflect.TypeFor[time.Duration](): func(seed int) any { return time.Duration(seed) * 1500 * time.Microsecond },
	reflect.TypeFor[json.RawMessage](): func(seed int) any {
		return json.RawMessage(fmt.Sprintf(`{"n":%d}`, seed))
	},
	reflect.TypeFor[mcpsdk.Content](): func(seed int) any {
		return mcpsdk.Content(&mcpsdk.TextContent{Text: fmt.Sprintf("text %d", seed)})
	},
	reflect.TypeFor[error]():              func(seed int) any { return fmt.Errorf("error %d", seed) },
	reflect.TypeFor[orchestrator.Asker](): func(seed int) any { return frontends[seed-1] },
	reflect.TypeFor[mcp.State](): func(seed int) any {
		return []mcp.State{mcp.StateConnected, mcp.StateFailed}[seed-1]
	},
	reflect.TypeFor[permissions.Effect](): func(seed int) any {
		return []permissions.Effect{permissions.Ask, permissions.Deny}[seed-1]
	},
	reflect.TypeFor[permissions.Source](): func(seed int) any {
		return []permissions.Source{permissions.SourceLocal, permissions.SourceProject}[seed-1]
	},
	// Every format has a hash.
	reflect.TypeFor[map[defscache.Format]string](): func(seed int) any {
		m := map[defscache.Format]string{}
		for _, f := range defscache.Formats() {
			m[f] = fmt.Sprintf("%s hash %d", f, seed)
		}
		return m
	},
}

// leafPaths lists the fields of t, walked into as the filler fills them:
// "Approval.OAuth.Scopes", "Approval.Pending[0].Title.Old".
func leafPaths(t reflect.Type, path string, values map[string][2]any, stack []reflect.Type) []string {
	if _, ok := values[path]; ok || fillers[t] != nil {
		return []string{path}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return leafPaths(t.Elem(), path, values, stack)
	case reflect.Slice:
		if e := deref(t.Elem()); walked(e) {
			return leafPaths(t.Elem(), path+"[0]", values, stack)
		}
	case reflect.Struct:
		if walked(t) && !slices.Contains(stack, t) {
			var out []string
			for f := range t.Fields() {
				if f.IsExported() {
					out = append(out, leafPaths(f.Type, join(path, f.Name), values, append(stack, t))...)
				}
			}
			return out
		}
	}
	return []string{path}
}

func deref(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// A filler fills every field of a value: with seed 1, but for the field
// changed, which gets seed 2.
type filler struct {
	t      *testing.T
	values map[string][2]any
	// changed is the path of the field filled with seed 2, if changing.
	changed  string
	changing bool
	stack    []reflect.Type
}

// value returns a filled value of type t.
func (f *filler) value(t reflect.Type, path string) any {
	v := reflect.New(t).Elem()
	f.fill(v, path)
	return v.Interface()
}

func (f *filler) fill(v reflect.Value, path string) {
	t := v.Type()
	seed := 1
	if f.changing && path == f.changed {
		seed = 2
	}
	if vs, ok := f.values[path]; ok {
		v.Set(reflect.ValueOf(vs[seed-1]).Convert(t))
		return
	}
	if mk := fillers[t]; mk != nil {
		v.Set(reflect.ValueOf(mk(seed)))
		return
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s %d", orWhole(path), seed))
	case reflect.Bool:
		v.SetBool(seed == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(10 + seed))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(10 + seed))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(seed) + 0.5)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		f.fill(p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(t, 1, 1)
		elem := path
		if walked(deref(t.Elem())) {
			elem += "[0]"
		}
		f.fill(s.Index(0), elem)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMapWithSize(t, 1)
		k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		f.fill(k, path)
		f.fill(e, path)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		if t.NumMethod() != 0 {
			f.t.Fatalf("%s: no filler for %v", path, t)
		}
		v.Set(reflect.ValueOf(fmt.Sprintf("%s %d", orWhole(path), seed)))
	case reflect.Struct:
		if !walked(t) {
			f.t.Fatalf("%s: no filler for %v", path, t)
		}
		if slices.Contains(f.stack, t) {
			return
		}
		f.stack = append(f.stack, t)
		for i := range t.NumField() {
			if sf := t.Field(i); sf.IsExported() {
				f.fill(v.Field(i), join(path, sf.Name))
			}
		}
		f.stack = f.stack[:len(f.stack)-1]
	default:
		f.t.Fatalf("%s: no filler for %v", path, t)
	}
}

// zeroPaths lists the fields of v left zero, walked into as leafPaths
// walks.
func zeroPaths(v reflect.Value, path string, out *[]string) {
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface:
		if v.IsNil() {
			*out = append(*out, path)
			return
		}
		zeroPaths(v.Elem(), path, out)
	case t.Kind() == reflect.Slice && walked(deref(t.Elem())):
		if v.Len() == 0 {
			*out = append(*out, path)
		}
		for i := range v.Len() {
			zeroPaths(v.Index(i), path+"[0]", out)
		}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Map:
		if v.Len() == 0 {
			*out = append(*out, path)
		}
	case walked(t):
		for i := range t.NumField() {
			if sf := t.Field(i); sf.IsExported() {
				zeroPaths(v.Field(i), join(path, sf.Name), out)
			}
		}
	case v.IsZero():
		*out = append(*out, path)
	}
}

// The filler itself: a value it fills has no zero field, and the same
// path filled with the other seed differs.
func TestFiller(t *testing.T) {
	type inner struct {
		N int
		B *bool
	}
	type sample struct {
		S   string
		In  inner
		Ins []*inner
		M   map[string]string
		Any any
		Err error
		At  time.Time
	}
	f := &filler{t: t}
	v := f.value(reflect.TypeFor[sample](), "").(sample)
	var zero []string
	zeroPaths(reflect.ValueOf(v), "", &zero)
	if len(zero) > 0 {
		t.Errorf("left zero: %v", zero)
	}
	paths := leafPaths(reflect.TypeFor[sample](), "", nil, nil)
	want := []string{"S", "In.N", "In.B", "Ins[0].N", "Ins[0].B", "M", "Any", "Err", "At"}
	if !slices.Equal(paths, want) {
		t.Errorf("leaf paths %v, want %v", paths, want)
	}
	for _, p := range paths {
		w := (&filler{t: t, changed: p, changing: true}).value(reflect.TypeFor[sample](), "").(sample)
		if reflect.DeepEqual(v, w) {
			t.Errorf("changing %s changed nothing", p)
		}
	}
}
