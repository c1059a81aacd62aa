package protocol

// The MCP Registry through the sidecar: search its servers, say what an
// install asks, install one (freecode/registry/*). The registry is the one
// the CLI asks: the managed settings' registry.url, else the config's
// mcp.registry.url, else the public one.

// RegistrySearchParams are the params of freecode/registry/search.
type RegistrySearchParams struct {
	// Query is words that the name, title or description must all hold
	// (case ignored); "" finds every server.
	Query string `json:"query"`
	// Refresh fetches the registry's list again, whatever the age of the
	// list kept in the user's cache directory.
	Refresh bool `json:"refresh,omitempty"`
	// Limit caps the entries answered; 0 answers them all.
	Limit int `json:"limit,omitempty"`
}

// RegistryEntry is one server of the registry, its latest version, as
// `freecode mcp search --json` prints it.
type RegistryEntry struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	Version     string `json:"version"`
	// Status is the version's when not active: "deprecated".
	Status string `json:"status,omitempty"`
	// Runs are how it can run: npm, pypi, oci, nuget, mcpb, remote.
	Runs []string `json:"runs"`
}

// RegistrySearchResult is the result of freecode/registry/search.
type RegistrySearchResult struct {
	// Registry is the registry's base URL.
	Registry string `json:"registry"`
	// Entries are the servers found, those whose name holds the query
	// first, at most Limit of them.
	Entries []RegistryEntry `json:"entries"`
	// Total is how many were found, Limit or not.
	Total int `json:"total"`
}

// RegistryValuesParams are the params of freecode/registry/values.
type RegistryValuesParams struct {
	// Name is the server's name in the registry.
	Name string `json:"name"`
	// Version is the version to install; "" or "latest" is the latest.
	Version string `json:"version,omitempty"`
	// Runs is how to run it when it offers several: npm, pypi, oci or
	// remote; "" picks the first whose runner (npx, uvx, docker) is on
	// PATH, else a remote.
	Runs string `json:"runs,omitempty"`
}

// RegistryValue is one value an install needs the user to give.
type RegistryValue struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Secret says it is a secret: asked in a password input, kept in the
	// secret store, the entry holding ${secret:NAME}.
	Secret  bool     `json:"secret,omitempty"`
	Default string   `json:"default,omitempty"`
	Choices []string `json:"choices,omitempty"`
}

// RegistryValuesResult is the result of freecode/registry/values: what
// the install of that version would ask and how it would run. Nothing is
// written.
type RegistryValuesResult struct {
	Registry    string `json:"registry"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// Version is the concrete version the install writes.
	Version string `json:"version"`
	// Status is "deprecated" for a deprecated version, StatusMessage the
	// publisher's why; a deleted version is an error.
	Status        string `json:"status,omitempty"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// Runs is how it would run: npm, pypi, oci or remote; Package what
	// runs: the package as its runner is given it ("pkg@1.2.0",
	// "pkg==1.2.0", the image), or the remote's URL, its {variables}
	// unfilled.
	Runs    string `json:"runs"`
	Package string `json:"package"`
	// Offered are every way it can run.
	Offered []string `json:"offered"`
	// EntryName is the name the entry gets unless the install names
	// another.
	EntryName string `json:"entryName"`
	// Values are what the install needs to be given, in the order the CLI
	// asks them.
	Values []RegistryValue `json:"values"`
	// ProjectScope says whether the install may write the project's
	// settings: only for a trusted project.
	ProjectScope bool `json:"projectScope"`
}

// RegistryInstallParams are the params of freecode/registry/install.
type RegistryInstallParams struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Runs    string `json:"runs,omitempty"`
	// Scope is where the entry goes: "user" (the default: the config
	// file) or "project" (the project's .freecode/settings.json; a
	// trusted project only, and the server runs once approved).
	Scope ServerScope `json:"scope,omitempty"`
	// EntryName names the entry; "" is RegistryValuesResult.EntryName.
	EntryName string `json:"entryName,omitempty"`
	// Values answer RegistryValuesResult.Values, by name, secret ones
	// too: the sidecar keeps those in the secret store, masks them in
	// its trace, and sends them back in no message.
	Values map[string]string `json:"values,omitempty"`
}

// RegistryInstallResult is the result of freecode/registry/install: the
// entry written. The workspace picks it up as it does any edit of the
// file; its status follows as freecode/servers/status.
type RegistryInstallResult struct {
	// Name is the entry's name.
	Name  string      `json:"name"`
	Scope ServerScope `json:"scope"`
	Type  ServerType  `json:"type"`
	// File is the file the entry was added to.
	File     string           `json:"file"`
	Registry RegistryIdentity `json:"registry"`
	// Secrets is how many secret values were kept in the secret store;
	// SecretsWhere where ("the OS keychain", or the file's path).
	Secrets      int    `json:"secrets"`
	SecretsWhere string `json:"secretsWhere,omitempty"`
}
