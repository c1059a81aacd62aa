package protocol

import "encoding/json"

// Pinned tool definitions: the sidecar pins each MCP server's tool
// definitions the first time it lists them, and a tool whose server later
// lists another definition awaits the user's review (docs/protocol.md).

// ReviewKind is what a review is about.
type ReviewKind string

// The kinds of a ToolReview, and of a DefinitionChange.
const (
	ReviewChanged ReviewKind = "changed" // the definition differs from the accepted one
	ReviewNew     ReviewKind = "new"     // the tool appeared on a server already pinned
	ReviewRemoved ReviewKind = "removed" // the server no longer lists the tool (a change only)
)

// ReviewAction is what freecode/tools/review does.
type ReviewAction string

// The actions of freecode/tools/review.
const (
	// ReviewDiff lists what awaits review, changing nothing.
	ReviewDiff ReviewAction = "diff"
	// ReviewAccept makes the listed definition the accepted one.
	ReviewAccept ReviewAction = "accept"
	// ReviewReject keeps the accepted definition and denies calls of the
	// listed one without asking, until the server lists another.
	ReviewReject ReviewAction = "reject"
)

// ReviewParams are the params of freecode/tools/review.
type ReviewParams struct {
	Server string `json:"server"`
	// Tool is the server's name for the tool (ToolReview.Tool); empty
	// means every tool of the server that awaits review.
	Tool   string       `json:"tool,omitempty"`
	Action ReviewAction `json:"action"`
	// Hash, for accept and reject, is the ToolReview.Hash the user was
	// shown: if the server changed the tool again since, nothing is done
	// and the request fails (-32602, naming hash).
	Hash string `json:"hash,omitempty"`
}

// ReviewResult is the result of freecode/tools/review: for diff, the
// reviews asked for; for accept and reject, the server's reviews left.
type ReviewResult struct {
	Reviews []ToolReview `json:"reviews"`
}

// ReviewNeeded is the params of freecode/tools/reviewNeeded: the tools of
// one server that await review, after that list changed. An empty list
// means nothing of the server is left to review.
type ReviewNeeded struct {
	Server  string       `json:"server"`
	Reviews []ToolReview `json:"reviews"`
}

// ToolReview is one tool whose definition awaits the user's review.
type ToolReview struct {
	Server string `json:"server"`
	// Tool is the server's name for the tool, ID its tool id.
	Tool string     `json:"tool"`
	ID   string     `json:"id"`
	Kind ReviewKind `json:"kind"`
	// Rejected: the user rejected the listed definition; calls of it are
	// denied.
	Rejected bool `json:"rejected,omitempty"`
	// Hidden: models are not shown the tool meanwhile, since its accepted
	// input schema cannot stand for the listed one.
	Hidden bool `json:"hidden,omitempty"`
	// Hash names the listed definition.
	Hash string `json:"hash"`
	// Diff is Change as lines to read. Like Change, it is the server's
	// text: a frontend that shows it on a terminal escapes it first.
	Diff   string           `json:"diff"`
	Change DefinitionChange `json:"change"`
}

// DefinitionChange is what differs between a tool's accepted definition
// and the one its server lists.
type DefinitionChange struct {
	Tool        string      `json:"tool"`
	Kind        ReviewKind  `json:"kind"`
	Title       *TextChange `json:"title,omitempty"`
	Description *TextChange `json:"description,omitempty"`
	// InputSchema and OutputSchema list the differences by JSON pointer.
	InputSchema  []PointerChange `json:"inputSchema,omitempty"`
	OutputSchema []PointerChange `json:"outputSchema,omitempty"`
	// Annotations lists the hints that differ, MCP's defaults applied.
	Annotations []HintChange `json:"annotations,omitempty"`
}

// TextChange is a changed text, with a word diff of it: what was removed
// in [-…-], what was added in {+…+}.
type TextChange struct {
	Old  string `json:"old"`
	New  string `json:"new"`
	Diff string `json:"diff"`
}

// PointerChange is one difference of a schema.
type PointerChange struct {
	// Pointer is an RFC 6901 JSON pointer; "" is the whole schema.
	Pointer string          `json:"pointer"`
	Op      PointerOp       `json:"op"`
	Old     json.RawMessage `json:"old,omitempty"`
	New     json.RawMessage `json:"new,omitempty"`
}

// PointerOp is what a PointerChange did at its pointer.
type PointerOp string

// The ops of a PointerChange.
const (
	OpAdd     PointerOp = "add"
	OpRemove  PointerOp = "remove"
	OpReplace PointerOp = "replace"
	// OpMore says that Pointer is a note of how many differences were
	// left out.
	OpMore PointerOp = "more"
)

// HintChange is one annotation that differs, MCP's defaults applied.
type HintChange struct {
	Hint Hint      `json:"hint"`
	Old  HintValue `json:"old"`
	New  HintValue `json:"new"`
}

// Hint names an MCP tool annotation.
type Hint string

// The annotations of a HintChange: four booleans and a title.
const (
	HintReadOnly    Hint = "readOnlyHint"
	HintDestructive Hint = "destructiveHint"
	HintIdempotent  Hint = "idempotentHint"
	HintOpenWorld   Hint = "openWorldHint"
	HintTitle       Hint = "title"
)

// HintValue is an annotation's value as JSON: a boolean, or the title's
// string.
//
//protocol:json boolean|string
type HintValue = json.RawMessage
