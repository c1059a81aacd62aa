// Package providerschema converts a tool's input schema into the copy a
// provider is sent with the tool's definition.
//
// A tool's inputSchema is kept whole for validating arguments; what a
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
//     dropped once inlined; every other keyword is kept as it is.
//   - A missing schema (absent, null or empty) becomes an object with no
//     properties, and that is reported. A real schema is never collapsed.
//
// Problems are returned as "<JSON pointer into the input>: <what happened>".
// They describe where the provider's view is looser than the real schema;
// the arguments are still validated against the real one.
//
// A Converter memoizes conversions, bounded in bytes: the defs cache
// rebuilds every tool's definition on each tools-changed event, and most
// schemas are the same as last time.
package providerschema
