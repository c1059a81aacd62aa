package mcpserve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
	"github.com/freecode/freecode/orchestrator"
)

// askInputKey is the key of the permission question among the input
// requests of an input_required result, and of its answer among the
// input responses of the call that comes back.
const askInputKey = "freecode/permission"

// askTTL is how long the answer to a permission question may take: the
// requestState of the question is refused after it.
const askTTL = 10 * time.Minute

// approverFor returns who answers the permission questions of a call:
// for a 2026-07-28 client that can be sent a form, the client by an
// input_required result (the returned *inputApprover, which says after
// the call whether it must be asked); for an older one, the client by an
// elicitation request while the call runs; else no one (nil).
func (s *Server) approverFor(req *mcpsdk.CallToolRequest) (orchestrator.Approver, *inputApprover) {
	if req.ProtocolVersion() < mcpwire.StatelessSince {
		if p := req.Session.InitializeParams(); p != nil && canElicit(p.Capabilities) {
			return &elicitApprover{session: req.Session}, nil
		}
		return nil, nil
	}
	if !canElicit(req.ClientCapabilities()) {
		return nil, nil
	}
	a := &inputApprover{states: s.asks, responses: req.Params.InputResponses, state: req.Params.RequestState}
	return a, a
}

// inputApprover answers the permission question of one call of a
// 2026-07-28 client, which cannot be sent a request while the call runs:
// the first time the call is asked, the call ends with an input_required
// result that holds the form and a requestState bound to the call; the
// client calls again with the user's answer and that state, and the
// question is then answered from them.
type inputApprover struct {
	states    *askStates
	responses mcpsdk.InputResponseMap
	state     string

	// asking is the question to put to the client, once the call was
	// asked without an answer.
	asking *orchestrator.Request
}

var _ orchestrator.Approver = (*inputApprover)(nil)

// errAskClient ends the first round of a call that needs permission: its
// denial is replaced by the input_required result.
var errAskClient = fmt.Errorf("%w (an input_required result)", orchestrator.ErrAskedLater)

// Approve answers from the call's input response, if it has one for this
// question; otherwise it notes the question and denies, and the call's
// result becomes the question (see inputRequired).
//
// An answer counts only with the requestState issued for this very call
// (the tool, its arguments as shown, the definition under review), within
// askTTL, once: an answer replayed, or carried over to other arguments,
// denies the call. As with an elicitation, a call whose arguments could
// not be shown whole is denied whatever the answer.
func (a *inputApprover) Approve(_ context.Context, req orchestrator.Request) (orchestrator.Answer, error) {
	resp, ok := a.responses[askInputKey]
	if !ok || a.state == "" {
		a.asking = &req
		return orchestrator.Answer{}, errAskClient
	}
	if err := a.states.redeem(a.state, req); err != nil {
		return orchestrator.Answer{}, err
	}
	if _, whole := approvalMessage(req); !whole {
		return orchestrator.Answer{}, errTooLargeToShow
	}
	res, ok := resp.(*mcpsdk.ElicitResult)
	if !ok {
		return orchestrator.Answer{}, fmt.Errorf("the answer to the permission question is a %T, not an elicitation result", resp)
	}
	if res.Action == "accept" && res.Content["decision"] == choiceAllowOnce {
		return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
	}
	return orchestrator.Answer{Decision: orchestrator.Deny}, nil
}

// inputRequired returns the input_required result that asks the question,
// if the call was asked without an answer, and nil otherwise.
func (a *inputApprover) inputRequired() *mcpsdk.CallToolResult {
	if a == nil || a.asking == nil {
		return nil
	}
	msg, whole := approvalMessage(*a.asking)
	schema := approvalSchema
	if !whole {
		schema = denyOnlySchema
	}
	return &mcpsdk.CallToolResult{
		InputRequests: mcpsdk.InputRequestMap{
			askInputKey: &mcpsdk.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema},
		},
		RequestState: a.states.issue(*a.asking),
	}
}

// askStates issues the requestState of permission questions and redeems
// it. A state is its expiry, a random nonce and an HMAC, under a key of
// the server's own, over those and the question: it cannot be forged, nor
// moved to another call. The nonces redeemed are kept until they expire,
// so that one "allow once" allows one call. With a directory the key and
// the nonces are kept there (askstore.go), and a server that restarted
// honours the states of the one before; without, they live as long as the
// server, and a restarted one refuses them.
type askStates struct {
	key [32]byte
	dir string // where the key and the used nonces are kept; "" in memory

	mu   sync.Mutex
	used map[[16]byte]time.Time // redeemed nonces → their expiry, without dir
}

// newAskStates returns the states of a server that keeps them in dir, or
// in memory if dir is "".
func newAskStates(dir string) (*askStates, error) {
	a := &askStates{dir: dir, used: map[[16]byte]time.Time{}}
	if dir == "" {
		rand.Read(a.key[:]) // never fails (crypto/rand)
		return a, nil
	}
	key, err := loadAskKey(dir)
	if err != nil {
		return nil, fmt.Errorf("the key of permission questions: %w", err)
	}
	a.key = key
	return a, nil
}

// stateLen is the size of a state before its encoding: the expiry (Unix
// seconds), the nonce and the MAC.
const stateLen = 8 + 16 + sha256.Size

// issue returns a new state for the question req.
func (a *askStates) issue(req orchestrator.Request) string {
	b := make([]byte, 8+16, stateLen)
	binary.BigEndian.PutUint64(b, uint64(time.Now().Add(askTTL).Unix()))
	rand.Read(b[8:24])
	b = append(b, a.mac(b[:24], req)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// redeem checks a state against the question req, and uses it up.
func (a *askStates) redeem(state string, req orchestrator.Request) error {
	b, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(b) != stateLen || !hmac.Equal(b[24:], a.mac(b[:24], req)) {
		why := "the answer came with a requestState that is not this server's question about this call"
		if a.dir == "" {
			why += " (or one a server that has since restarted asked: it keeps no question over a restart)"
		}
		return errors.New(why + "; call again to be asked")
	}
	expiry := time.Unix(int64(binary.BigEndian.Uint64(b)), 0)
	now := time.Now()
	if now.After(expiry) {
		return fmt.Errorf("the question expired (answers are taken for %v); call again to be asked", askTTL)
	}
	nonce := [16]byte(b[8:24])
	if a.dir != "" {
		used, err := useNonce(a.dir, nonce, expiry, now)
		switch {
		case err != nil:
			return fmt.Errorf("the answer could not be recorded as used, so it is not taken (%v); call again to be asked", err)
		case used:
			return errors.New("this answer was used already: an answer allows one call; call again to be asked")
		}
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for n, exp := range a.used {
		if now.After(exp) {
			delete(a.used, n)
		}
	}
	if _, ok := a.used[nonce]; ok {
		return errors.New("this answer was used already: an answer allows one call; call again to be asked")
	}
	a.used[nonce] = expiry
	return nil
}

// mac is the HMAC of a state's head and the question it belongs to. Each
// part is length-prefixed, so that no two questions share an input.
func (a *askStates) mac(head []byte, req orchestrator.Request) []byte {
	h := hmac.New(sha256.New, a.key[:])
	h.Write(head)
	shown := "" // the definition under review, if any
	if req.Review != nil {
		shown = req.Review.Hash
	}
	for _, part := range []string{req.Tool, req.Server, string(req.Arguments), shown} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return h.Sum(nil)
}
