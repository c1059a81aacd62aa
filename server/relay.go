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
)

// What an MCP server asks during a frontend's request, elicitation and
// sampling, goes to that frontend and no other: each session has one
// *mcp.Answerer, given with every batch it sends (ExecOptions.Answerer)
// and in the context of its resources/read and prompts/get
// (mcp.WithAnswerer), so
// the Conn finds it by pointer. Its functions are set only for what the
// frontend declared in initialize (initializationOptions.capabilities);
// the Conn declines an elicitation and refuses sampling for a frontend
// that did not, without sending it anything.
//
// The Conn bounds each question by the request it came during: when the
// call ends (its deadline, $/cancelRequest, the frontend gone) the
// question's context ends, and lsp.Call sends the frontend $/cancelRequest
// for it, so that it can take its form or dialog down.

// newAnswerer returns the session's Answerer for the capabilities it
// declared.
func (sess *session) newAnswerer(caps protocol.ClientCapabilities) *mcp.Answerer {
	c := &mcp.Answerer{}
	if caps.Elicitation {
		c.Elicit = sess.elicit
	}
	if caps.Sampling {
		c.Sample = sess.sample
	}
	return c
}

// elicit asks the frontend with freecode/elicitation/request. An error
// (the frontend does not implement it, fails, answers something else than
// the three actions) is a decline for the Conn; a URL is the frontend's
// to open, once the user agrees.
func (sess *session) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcpsdk.ElicitResult, error) {
	p := req.Params
	er := &protocol.ElicitationRequest{Server: req.Server, CallID: req.CallID, Mode: protocol.ElicitForm, Message: p.Message}
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
	sess.logger.Info("elicitation answered", "server", req.Server, "callId", req.CallID, "mode", er.Mode, "action", resp.Action)
	return &mcpsdk.ElicitResult{Action: string(resp.Action), Content: resp.Content}, nil
}

// sample asks the frontend with freecode/sampling/request. The frontend's
// JSON-RPC error (its user said no, its model failed) reaches the server
// as it is; a frontend that does not implement the request refuses it.
func (sess *session) sample(ctx context.Context, req *mcp.SampleRequest) (*mcpsdk.CreateMessageResult, error) {
	params, err := json.Marshal(req.Params)
	if err != nil {
		return nil, fmt.Errorf("the sampling request's params: %w", err)
	}
	var raw json.RawMessage
	err = lsp.Call(ctx, sess.conn, protocol.MethodSamplingRequest,
		&protocol.SamplingRequest{Server: req.Server, CallID: req.CallID, Params: params}, &raw)
	var werr *jsonrpc2.Error
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, jsonrpc2.ErrMethodNotFound):
		return nil, &jsonrpc.Error{Code: mcp.CodeSamplingRejected, Message: "sampling refused: the frontend does no sampling"}
	case errors.As(err, &werr):
		sess.logger.Info("sampling refused by the frontend", "server", req.Server, "callId", req.CallID, "code", werr.Code)
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
	sess.logger.Info("sampling answered", "server", req.Server, "callId", req.CallID, "model", res.Model)
	return &res, nil
}
