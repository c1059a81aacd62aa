// Package permissions decides whether a tool call may run, asks first, or
// is denied, from the rules in FreeCode's settings files.
//
// # Files
//
// Three files may hold rules, all optional, all of the same shape (JSON with
// comments; other keys belong to other parts of FreeCode and are left alone):
//
//	~/.freecode/settings.json                 user
//	<project>/.freecode/settings.json         project (committed with the repository)
//	<project>/.freecode/settings.local.json   local (not committed)
//
//	{
//	  "permissions": {
//	    "allow": ["mcp__github__get_*", "read"],
//	    "ask":   ["mcp__github"],
//	    "deny":  ["mcp__github__delete_repo"]
//	  }
//	}
//
// In a project at the home directory the project's settings.json is the
// user's: it is read once, as the user's.
//
// A file that does not parse, or whose lists are not lists of strings, is an
// error that names the file, line and column; until it is fixed the rules it
// last had stay in force. A rule that is not valid (see Patterns) is skipped
// with a warning, as is an unknown key inside "permissions".
//
// # Tool ids
//
// Rules match tool ids. Built-in tools are named by their bare name: read,
// write, bash. An MCP tool's id is mcp__<server>__<tool>: the server's name
// from the config, then the tool's name with every character other than
// A-Z a-z 0-9 _ - replaced and runs of "_" collapsed, so neither part of an
// id FreeCode makes contains "__". The matcher does not rely on that for
// the tool part (see Patterns), since a rule may be written for any id.
// The grammar lives in internal/toolid. A rule may also name a tool by its
// alias (see Aliases).
//
// # Patterns
//
// A pattern is one of these forms. Matching is case-sensitive, like MCP tool
// names: Read does not cover read. Whitespace around a pattern is ignored;
// whitespace inside it makes it invalid.
//
//	pattern                 covers
//	read                    the built-in tool "read" (not "readme", not "read_x")
//	web*                    the built-in tools whose name starts with "web"
//	*                       every tool, built-in or MCP
//	mcp                     every MCP tool (the same as mcp__*)
//	mcp__*                  every MCP tool
//	mcp__github             every tool of server "github" (not of "github2", not of "git")
//	mcp__git*               every tool of the servers whose name starts with "git"
//	mcp__github__get_issue  exactly that tool (not "get_issue_x", not "get_issue__x")
//	mcp__github__get_*      the tools of "github" whose name starts with "get_"
//	mcp__*__read            the tool "read" of every server
//	mcp__*__*               every MCP tool (every real one has a tool part)
//
// So a pattern covers a tool id if it equals it, or if it names a whole
// server (mcp__<server>) and the id is one of that server's tools. A prefix
// covers nothing: mcp__git does not cover mcp__github__x, and
// mcp__github__create does not cover mcp__github__create_issue.
//
// A '*' matches any run of characters, possibly none, within the part it is
// in: the server part of mcp__<server>__<tool> or its tool part, or the
// name of a built-in. It never reaches across the "__" after the server, so
// mcp__*__read does not cover mcp__a__b__read (tool "b__read" of "a"); in
// the tool part it does match "__", which no id FreeCode makes has there
// but the matcher does not assume. A
// pattern without "__" names built-in tools only (except "*" and "mcp").
//
// These are invalid, and skipped with a warning: an empty pattern; a
// character other than A-Z a-z 0-9 _ - and '*' (tool ids have no others:
// write the sanitized id as FreeCode lists it); "**"; a pattern
// with "__" that does not start with "mcp__" (such as MCP__x or *__x); an
// empty server or tool part ("mcp__", "mcp____x", "mcp__github__"); a
// pattern that starts with "mcp*" (it would cover no MCP tool: write
// mcp__*); a pattern with '*' in which the "__" after the server is
// followed by another "_", like mcp__a___* (it reads two ways, see below:
// write the full id instead); and a pattern longer than 512 characters.
//
// # Ids that read two ways
//
// FreeCode's config refuses server names that start or end with "_", and
// the registry's sanitized tool names never start with "_", so the ids it
// makes read one way. The matcher does not rely on that: were a server
// named "a_" and a tool "_x", mcp__a___x would be either tool "x" of server
// "a_" or tool "_x" of server "a".
// Deny and ask rules apply if they cover either reading; allow rules only
// if they cover both (mcp__a does not allow mcp__a___x, since it might be a
// tool of "a_"; the full id mcp__a___x does). An odd name can make FreeCode
// ask more, never less.
//
// # Aliases
//
// Providers accept tool names of at most 64 characters, so a longer id is
// sent to the model under an alias: its first 55 characters, "_" and 8
// hex characters of a hash (mcp__github__create_or_update_file_contents_in_a_repository_branch
// is sent as mcp__github__create_or_update_file_contents_in_a_reposi_828ede5d).
// The model calls the tool by that name and `freecode tools defs` shows
// it, so a user may well copy it into a rule. A rule whose whole text is a
// tool's alias covers that tool, as if it named its id: as a deny, ask or
// allow rule, with the usual precedence, whether the call uses the alias
// or the id.
//
// Only a rule without '*' can name an alias. A glob is matched against ids
// only: an alias ends in a hash, and mcp__*__*add (every tool whose name
// ends in "add") must not cover a tool whose alias's hash happens to end
// in "add". A glob that covers a tool's id covers the tool, whatever its
// alias.
//
// An alias names one tool. The registry never gives a tool an alias that
// is another tool's id or alias: when a server names a tool exactly like
// another tool's alias, the long tool gets an alternative one (the same
// form, another hash). A deny or ask rule written with the alias it had
// still covers it (and the newcomer, by its id), so a server cannot take a
// tool out of such a rule by adding a tool under its alias. An allow rule
// covers a tool only under the alias it has now, so after such a move the
// long tool asks again; the rule's text now names the newcomer by its id
// and allows it, as any rule that names one tool allows whatever the
// server calls by that name.
//
// # Precedence
//
// deny beats ask beats allow, whichever files the rules come from and
// however specific they are: a project cannot allow what the user denied,
// and an allow rule for one tool cannot carve it out of an ask or deny rule
// on its server (ask on mcp__github and allow mcp__github__get_issue: it
// asks). A tool no rule covers runs if it
// is read-only (its readOnlyHint says so) and asks otherwise.
//
// # Managed rules
//
// An organization's managed settings (/etc/freecode/managed-settings.json
// and its drop-ins, read by the config package, not here) may hold rules of
// the same grammar, LoadOptions.Managed, which no user or project can
// loosen. They come first in Rules order (managed, user, project, local,
// session) with SourceManaged, and their reasons say whose they are:
// `denied by your organization's rule "mcp__x" in
// /etc/freecode/managed-settings.json`, followed by the organization's
// message (LoadOptions.ManagedMessage) if it has one.
//
// A managed deny or ask rule holds against every allow rule, by the usual
// precedence: the user's, a trusted project's accepted ones, the session's
// (an "always allow" answer), and the managed allow rules themselves. A
// tool under a managed ask rule is asked about at every call, whatever was
// answered before. An invalid managed rule is skipped with a warning at its
// position, as a file's is: an invalid deny rule is not widened into one
// that denies more, which would stop every call for a typo only the
// organization can fix.
//
// With ManagedOnly (allowManagedPermissionRulesOnly) only the managed allow
// rules apply: every file's allow rules are ignored, each with a warning at
// its position, and so are the session's; Set.AllowSession refuses new ones
// (ErrManagedOnly), and Set.ManagedOnly tells an asker that an "always
// allow" answer could take no effect.
//
// # Untrusted projects
//
// A cloned repository is untrusted input. Until the user trusts the
// project (`freecode trust`, or the frontend's prompt), the deny and ask
// rules of its two files apply and their allow rules are ignored, each with
// a warning; otherwise a repository could ship "allow": ["mcp__*"] and run
// the user's own destructive tools without asking.
//
// # Trusted projects
//
// Trust covers the two files as they were when the user trusted the
// project, not whatever they say later: a pull, an editor, or a server of
// the project's that may write the project directory can change them. So
// trusting records their rules as accepted (Accept) in a file of the
// user's, ~/.freecode/trust/<hash of the project's real path>.json (0600;
// AcceptedPath), never in the project. From then on (LoadOptions.Accepted)
// a file may tighten at once (a new deny or ask rule, an allow rule taken
// out) but loosens only once the user accepts it:
//
//   - an allow rule that is not accepted is ignored, with a warning;
//   - an accepted deny or ask rule the file no longer has is still
//     enforced, with a warning.
//
// Both are in Set.Pending, file by file, with the hash of the rules that
// accepting records; `freecode trust` (again) or the frontend's prompt
// accepts them, and revoking trust forgets the record (RemoveAccepted).
// The rules in force are never looser than the accepted ones. A project
// trusted before FreeCode kept records has its rules as they are at the
// first load after as accepted (Adopt).
//
// An accepted deny rule that is moved from one of the two files to the
// other is still enforced from the first until accepted, and a deny rule
// added after trust is enforced but not held: accepting records it.
//
// # Always allow
//
// An "always allow" answer is written as an allow rule to the file of the
// scope the user picked, local or user (AddScopeAllow), keeping every other
// byte of the file, and applies at once for the session (Set.AllowSession).
// A local rule is written only to a file that really is inside the project
// (a repository's links cannot redirect it to the user's file), and in a
// project that is not trusted it is saved but, like the project's other
// allow rules, ignored until trust (Set.ProjectTrusted says which). In a
// trusted project it joins the accepted rules first: it is the user's own
// answer, and never awaits review. It cannot loosen a deny or ask rule
// (whoever asks should not offer it where a managed rule decides, or under
// ManagedOnly).
//
// Rule files are read only if they are regular files: a link to a FIFO or
// to /dev/stdin is an error, not a read that blocks or steals input.
package permissions
