package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
)

// What an MCP server asks during a frontend's request, elicitation,
// sampling and a sign-in for more access, goes to that frontend and no
// other: each session has one relay, its orchestrator.Asker, given with
// every batch it sends (ExecOptions.Asker) and with its resources/read and
// prompts/get, so the Conn finds it for the request the question comes
// during. It asks the frontend only what the frontend declared it answers
// in initialize (initializationOptions.capabilities): the Conn declines an
// elicitation and refuses sampling for one that did not, without sending
// it anything.
//
// The Conn bounds each question by the request it came during: when the
// call ends (its deadline, $/cancelRequest, the frontend gone) the
// question's context ends, and lsp.Call sends the frontend $/cancelRequest
// for it, so that it can take its form or dialog down.

// relay is a frontend's Asker: it asks that frontend.
type relay struct {
	sess           *session
	elicit, sample bool // what the frontend declared it answers
}

var _ orchestrator.Asker = (*relay)(nil)

// newRelay returns the session's Asker for the capabilities it declared.
func (sess *session) newRelay(caps protocol.ClientCapabilities) *relay {
	return &relay{sess: sess, elicit: caps.Elicitation, sample: caps.Sampling}
}

// Elicit asks the frontend, if it declared elicitation.
func (r *relay) Elicit(ctx context.Context, server, callID string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	if !r.elicit {
		return nil, errors.New("the frontend answers no elicitation")
	}
	return r.sess.elicit(ctx, server, callID, p)
}

// Sample asks the frontend, if it declared sampling.
func (r *relay) Sample(ctx context.Context, server, callID string, p *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error) {
	if !r.sample {
		return nil, &jsonrpc.Error{Code: mcp.CodeSamplingRejected, Message: "sampling refused: the frontend does no sampling"}
	}
	return r.sess.sample(ctx, server, callID, p)
}

// SignInOpener shows the sign-in page through the frontend (login.go).
func (r *relay) SignInOpener(server string) func(ctx context.Context, url string) error {
	return func(ctx context.Context, url string) error {
		return r.sess.openURL(ctx, url, fmt.Sprintf("The MCP server %q asks for more access: sign in again", server))
	}
}

// elicit asks the frontend with freecode/elicitation/request. An error
// (the frontend does not implement it, fails, answers something else than
// the three actions) is a decline for the Conn; a URL is the frontend's
// to open, once the user agrees.
func (sess *session) elicit(ctx context.Context, server, callID string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	er := &protocol.ElicitationRequest{Server: server, CallID: callID, Mode: protocol.ElicitForm, Message: p.Message}
	if p.Mode == "url" || (p.Mode == "" && p.URL != "") {
		er.Mode, er.URL = protocol.ElicitURL, p.URL
	} else if p.RequestedSchema != nil {
		schema, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("the elicitation's schema: %w", err)
		}
		er.RequestedSchema = schema
	}
	var resp protocol.ElicitationResponse
	if err := lsp.Call(ctx, sess.conn, protocol.MethodElicitationRequest, er, &resp); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return nil, errors.New("the frontend does not answer elicitation")
		}
		return nil, fmt.Errorf("asking the frontend: %w", err)
	}
	switch resp.Action {
	case protocol.ElicitAccept, protocol.ElicitDecline, protocol.ElicitCancel:
	default:
		return nil, fmt.Errorf("the frontend answered action %q", resp.Action)
	}
	sess.logger.Info("elicitation answered", "server", server, "callId", callID, "mode", er.Mode, "action", resp.Action)
	return &mcpsdk.ElicitResult{Action: string(resp.Action), Content: resp.Content}, nil
}

// sample asks the frontend with freecode/sampling/request. The frontend's
// JSON-RPC error (its user said no, its model failed) reaches the server
// as it is; a frontend that does not implement the request refuses it.
func (sess *session) sample(ctx context.Context, server, callID string, p *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error) {
	params, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("the sampling request's params: %w", err)
	}
	var raw json.RawMessage
	err = lsp.Call(ctx, sess.conn, protocol.MethodSamplingRequest,
		&protocol.SamplingRequest{Server: server, CallID: callID, Params: params}, &raw)
	var werr *jsonrpc2.Error
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, jsonrpc2.ErrMethodNotFound):
		return nil, &jsonrpc.Error{Code: mcp.CodeSamplingRejected, Message: "sampling refused: the frontend does no sampling"}
	case errors.As(err, &werr):
		sess.logger.Info("sampling refused by the frontend", "server", server, "callId", callID, "code", werr.Code)
		return nil, &jsonrpc.Error{Code: int64(werr.Code), Message: werr.Message, Data: json.RawMessage(werr.Data)}
	default:
		return nil, fmt.Errorf("asking the frontend: %w", err)
	}
	var res mcpsdk.CreateMessageResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Content == nil {
		if err == nil {
			err = errors.New("no content")
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "sampling failed: the frontend's answer is not a CreateMessageResult: " + err.Error()}
	}
	sess.logger.Info("sampling answered", "server", server, "callId", callID, "model", res.Model)
	return &res, nil
}
