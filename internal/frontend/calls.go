package frontend

import (
	"context"

	"github.com/freecode/freecode/internal/protocol"
)

// Servers returns every server's status (freecode/servers).
func (c *Client) Servers(ctx context.Context) ([]protocol.ServerStatus, error) {
	var res protocol.ServersResult
	err := c.Call(ctx, protocol.MethodServers, struct{}{}, &res)
	return res.Servers, err
}

func (c *Client) serverOp(ctx context.Context, method, name string) (*protocol.ServerStatus, error) {
	var st protocol.ServerStatus
	if err := c.Call(ctx, method, &protocol.ServerParams{Name: name}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// StartServer starts a server and returns its status once it is connected
// or failed (freecode/servers/start).
func (c *Client) StartServer(ctx context.Context, name string) (*protocol.ServerStatus, error) {
	return c.serverOp(ctx, protocol.MethodServersStart, name)
}

// StopServer stops a server (freecode/servers/stop).
func (c *Client) StopServer(ctx context.Context, name string) (*protocol.ServerStatus, error) {
	return c.serverOp(ctx, protocol.MethodServersStop, name)
}

// RestartServer restarts a server (freecode/servers/restart).
func (c *Client) RestartServer(ctx context.Context, name string) (*protocol.ServerStatus, error) {
	return c.serverOp(ctx, protocol.MethodServersRestart, name)
}

// ApproveServer approves a project server, or revokes its approval
// (freecode/servers/approve). entryHash is the approval.entryHash of the
// status the user was shown: required to approve, optional to revoke.
func (c *Client) ApproveServer(ctx context.Context, name string, approve bool, entryHash string) (*protocol.ServerStatus, error) {
	var st protocol.ServerStatus
	if err := c.Call(ctx, protocol.MethodServersApprove, &protocol.ApproveParams{Name: name, Approve: approve, EntryHash: entryHash}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Tools returns the tools of server, or every tool with server ""
// (freecode/tools).
func (c *Client) Tools(ctx context.Context, server string) ([]protocol.ToolInfo, error) {
	var res protocol.ToolsResult
	err := c.Call(ctx, protocol.MethodTools, &protocol.ToolsParams{Server: server}, &res)
	return res.Tools, err
}

// Definitions returns the tools array of a provider's format and its hash
// (freecode/tools/definitions).
func (c *Client) Definitions(ctx context.Context, format protocol.Format) (*protocol.DefinitionsResult, error) {
	var res protocol.DefinitionsResult
	if err := c.Call(ctx, protocol.MethodToolsDefinitions, &protocol.DefinitionsParams{Format: format}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Execute runs a batch of calls and returns their results in order
// (freecode/tools/execute). Cancelling ctx cancels the calls still
// running.
func (c *Client) Execute(ctx context.Context, calls ...protocol.ToolCall) ([]protocol.ToolResult, error) {
	var res protocol.ExecuteResult
	err := c.Call(ctx, protocol.MethodToolsExecute, &protocol.ExecuteParams{Calls: calls}, &res)
	return res.Results, err
}

// Permissions returns the permission rules in force (freecode/permissions).
func (c *Client) Permissions(ctx context.Context) ([]protocol.Rule, error) {
	var res protocol.PermissionsResult
	err := c.Call(ctx, protocol.MethodPermissions, struct{}{}, &res)
	return res.Rules, err
}

// RemoveAllow takes an "always allow" answer back: rule leaves the session
// and the rule file of scope (freecode/permissions/removeAllow).
func (c *Client) RemoveAllow(ctx context.Context, rule string, scope protocol.PermissionScope) (*protocol.RemoveAllowResult, error) {
	var res protocol.RemoveAllowResult
	if err := c.Call(ctx, protocol.MethodPermissionsRemoveAllow, &protocol.RemoveAllowParams{Rule: rule, Scope: scope}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Project describes the sidecar's project and files (freecode/project).
func (c *Client) Project(ctx context.Context) (*protocol.Project, error) {
	var res protocol.Project
	if err := c.Call(ctx, protocol.MethodProject, struct{}{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetTrusted trusts the project, or no longer, and returns whether it is
// trusted now (freecode/project/trust).
func (c *Client) SetTrusted(ctx context.Context, trusted bool) (bool, error) {
	var res protocol.TrustResult
	err := c.Call(ctx, protocol.MethodProjectTrust, &protocol.TrustParams{Trusted: trusted}, &res)
	return res.ProjectTrusted, err
}

// AcceptRules trusts the project with the rules the user was shown as
// awaiting review, named by hash (protocol.RulesReview.Hash): if the
// project's files changed since, nothing is accepted and the error is
// -32602 naming rulesHash (freecode/project/trust).
func (c *Client) AcceptRules(ctx context.Context, hash string) error {
	var res protocol.TrustResult
	return c.Call(ctx, protocol.MethodProjectTrust, &protocol.TrustParams{Trusted: true, RulesHash: hash}, &res)
}

// Login signs in to a remote server and returns its status once signed in
// and connected, or once the sign-in failed (freecode/servers/login). The
// sidecar has the sign-in page opened with window/showDocument
// (OnShowDocument), else in the browser of its machine.
func (c *Client) Login(ctx context.Context, name string) (*protocol.ServerStatus, error) {
	return c.serverOp(ctx, protocol.MethodServersLogin, name)
}

// Logout stops a remote server and forgets its sign-in
// (freecode/servers/logout).
func (c *Client) Logout(ctx context.Context, name string) (*protocol.ServerStatus, error) {
	return c.serverOp(ctx, protocol.MethodServersLogout, name)
}

// Resources returns the resources of server, or of every connected server
// with server "" (freecode/resources).
func (c *Client) Resources(ctx context.Context, server string) ([]protocol.ResourceInfo, error) {
	var res protocol.ResourcesResult
	err := c.Call(ctx, protocol.MethodResources, &protocol.ResourcesParams{Server: server}, &res)
	return res.Resources, err
}

// ReadResource reads the resource uri of server (freecode/resources/read).
func (c *Client) ReadResource(ctx context.Context, server, uri string) (*protocol.ReadResourceResult, error) {
	var res protocol.ReadResourceResult
	if err := c.Call(ctx, protocol.MethodResourcesRead, &protocol.ReadResourceParams{Server: server, URI: uri}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Prompts returns the prompts of server, or of every connected server with
// server "" (freecode/prompts).
func (c *Client) Prompts(ctx context.Context, server string) ([]protocol.PromptInfo, error) {
	var res protocol.PromptsResult
	err := c.Call(ctx, protocol.MethodPrompts, &protocol.PromptsParams{Server: server}, &res)
	return res.Prompts, err
}

// GetPrompt gets the prompt name of server with args
// (freecode/prompts/get).
func (c *Client) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*protocol.GetPromptResult, error) {
	var res protocol.GetPromptResult
	if err := c.Call(ctx, protocol.MethodPromptsGet, &protocol.GetPromptParams{Server: server, Name: name, Arguments: args}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ReviewTools lists a server's tools whose definitions await review, or
// accepts or rejects them, as p.Action says (freecode/tools/review). It
// returns the reviews asked for (diff) or left (accept, reject).
func (c *Client) ReviewTools(ctx context.Context, p protocol.ReviewParams) ([]protocol.ToolReview, error) {
	var res protocol.ReviewResult
	err := c.Call(ctx, protocol.MethodToolsReview, &p, &res)
	return res.Reviews, err
}

// Tasks returns the tasks of calls the sidecar follows, and the latest
// that ended (freecode/tasks), as this Client may see them: the result,
// error and status message of its own only (Mine).
func (c *Client) Tasks(ctx context.Context) ([]protocol.TaskInfo, error) {
	var res protocol.TasksResult
	err := c.Call(ctx, protocol.MethodTasks, struct{}{}, &res)
	return res.Tasks, err
}

// CancelTask asks the sidecar to cancel a task of this Client's
// (freecode/tasks/cancel); its end comes as freecode/tasks/changed. The
// task of another frontend is an error of code protocol.CodeNotYourTask:
// AdoptTask first.
func (c *Client) CancelTask(ctx context.Context, server, taskID string) (*protocol.TaskInfo, error) {
	var res protocol.TaskInfo
	if err := c.Call(ctx, protocol.MethodTasksCancel, &protocol.TaskCancelParams{Server: server, TaskID: taskID}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// AdoptTask makes a task this Client's (freecode/tasks/adopt): its
// result, its questions and its cancel, live or ended. Its former owner
// is told.
func (c *Client) AdoptTask(ctx context.Context, server, taskID string) (*protocol.TaskInfo, error) {
	var res protocol.TaskInfo
	if err := c.Call(ctx, protocol.MethodTasksAdopt, &protocol.TaskAdoptParams{Server: server, TaskID: taskID}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetSecret is freecode/secrets/set.
func (c *Client) SetSecret(ctx context.Context, name, value string) (*protocol.SecretSetResult, error) {
	var r protocol.SecretSetResult
	if err := c.Call(ctx, protocol.MethodSecretsSet, protocol.SecretSetParams{Name: name, Value: value}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// RegistrySearch is freecode/registry/search.
func (c *Client) RegistrySearch(ctx context.Context, p protocol.RegistrySearchParams) (*protocol.RegistrySearchResult, error) {
	var r protocol.RegistrySearchResult
	if err := c.Call(ctx, protocol.MethodRegistrySearch, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// RegistryValues is freecode/registry/values.
func (c *Client) RegistryValues(ctx context.Context, p protocol.RegistryValuesParams) (*protocol.RegistryValuesResult, error) {
	var r protocol.RegistryValuesResult
	if err := c.Call(ctx, protocol.MethodRegistryValues, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// RegistryInstall is freecode/registry/install.
func (c *Client) RegistryInstall(ctx context.Context, p protocol.RegistryInstallParams) (*protocol.RegistryInstallResult, error) {
	var r protocol.RegistryInstallResult
	if err := c.Call(ctx, protocol.MethodRegistryInstall, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
