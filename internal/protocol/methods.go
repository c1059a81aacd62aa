package protocol

import "reflect"

//go:generate go run ./gen

// Sender is the end of a connection that sends a method.
type Sender int

const (
	// Frontend sends what the sidecar handles.
	Frontend Sender = iota + 1
	// Sidecar sends what a frontend handles.
	Sidecar
)

func (s Sender) String() string {
	switch s {
	case Frontend:
		return "frontend"
	case Sidecar:
		return "sidecar"
	}
	return "Sender(?)"
}

// MethodSpec is one method of the protocol: its name, the end that sends
// it, and the Go types of its params and of its result, which a
// notification has none of.
type MethodSpec struct {
	Name   string
	From   Sender
	Params reflect.Type
	// Result is nil for a notification.
	Result reflect.Type
}

// Notification reports whether m is a notification: nothing answers it.
func (m MethodSpec) Notification() bool { return m.Result == nil }

func request[P, R any](from Sender, name string) MethodSpec {
	return MethodSpec{Name: name, From: from, Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R]()}
}

func notification[P any](from Sender, name string) MethodSpec {
	return MethodSpec{Name: name, From: from, Params: reflect.TypeFor[P]()}
}

// Empty is the params of a request that takes none: {}.
type Empty struct{}

// Methods are the methods of FreeCode's own protocol, each with its params
// and result: the one place a method is bound to its types. The frontends'
// TypeScript method tables are generated from it (gen, `go generate`),
// the sidecar's handlers are checked against it (server's tests), and a
// method constant missing from it fails this package's tests. The
// lifecycle (initialize, initialized, shutdown, exit, $/cancelRequest,
// workspace/didChangeWorkspaceFolders, window/logMessage,
// window/showDocument) is LSP's, typed by LSP's libraries, and not here.
var Methods = []MethodSpec{
	request[ChallengeParams, ChallengeResult](Frontend, MethodChallenge),
	request[Empty, ServersResult](Frontend, MethodServers),
	request[ServerParams, ServerStatus](Frontend, MethodServersStart),
	request[ServerParams, ServerStatus](Frontend, MethodServersStop),
	request[ServerParams, ServerStatus](Frontend, MethodServersRestart),
	request[ApproveParams, ServerStatus](Frontend, MethodServersApprove),
	request[ServerParams, ServerStatus](Frontend, MethodServersLogin),
	request[ServerParams, ServerStatus](Frontend, MethodServersLogout),
	request[ToolsParams, ToolsResult](Frontend, MethodTools),
	request[DefinitionsParams, DefinitionsResult](Frontend, MethodToolsDefinitions),
	request[ExecuteParams, ExecuteResult](Frontend, MethodToolsExecute),
	request[ReviewParams, ReviewResult](Frontend, MethodToolsReview),
	request[Empty, PermissionsResult](Frontend, MethodPermissions),
	request[RemoveAllowParams, RemoveAllowResult](Frontend, MethodPermissionsRemoveAllow),
	request[Empty, Project](Frontend, MethodProject),
	request[TrustParams, TrustResult](Frontend, MethodProjectTrust),
	request[ResourcesParams, ResourcesResult](Frontend, MethodResources),
	request[ReadResourceParams, ReadResourceResult](Frontend, MethodResourcesRead),
	request[PromptsParams, PromptsResult](Frontend, MethodPrompts),
	request[GetPromptParams, GetPromptResult](Frontend, MethodPromptsGet),
	request[Empty, TasksResult](Frontend, MethodTasks),
	request[TaskCancelParams, TaskInfo](Frontend, MethodTasksCancel),
	request[TaskAdoptParams, TaskInfo](Frontend, MethodTasksAdopt),
	request[Empty, WebCodeResult](Frontend, MethodWebCode),
	request[SecretSetParams, SecretSetResult](Frontend, MethodSecretsSet),
	request[Empty, GatewayResult](Frontend, MethodGatewayOpen),
	request[RegistrySearchParams, RegistrySearchResult](Frontend, MethodRegistrySearch),
	request[RegistryValuesParams, RegistryValuesResult](Frontend, MethodRegistryValues),
	request[RegistryInstallParams, RegistryInstallResult](Frontend, MethodRegistryInstall),

	request[PermissionRequest, PermissionResponse](Sidecar, MethodPermissionRequest),
	request[ElicitationRequest, ElicitationResponse](Sidecar, MethodElicitationRequest),
	request[SamplingRequest, SamplingResult](Sidecar, MethodSamplingRequest),

	notification[ServerStatus](Sidecar, NotifyServersStatus),
	notification[ToolsChanged](Sidecar, NotifyToolsChanged),
	notification[ToolProgress](Sidecar, NotifyToolsProgress),
	notification[ServerLog](Sidecar, NotifyServersLog),
	notification[ConfigProblems](Sidecar, NotifyConfigProblems),
	notification[ListChanged](Sidecar, NotifyResourcesChanged),
	notification[ListChanged](Sidecar, NotifyPromptsChanged),
	notification[ReviewNeeded](Sidecar, NotifyReviewNeeded),
	notification[TaskInfo](Sidecar, NotifyTasksChanged),
	notification[RulesReview](Sidecar, NotifyRulesReview),
}

// Lookup returns the method of that name in Methods.
func Lookup(name string) (MethodSpec, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return MethodSpec{}, false
}
