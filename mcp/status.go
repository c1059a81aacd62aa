// Package mcp is FreeCode's MCP client: one Conn per configured server
// (stdio subprocess, Streamable HTTP or legacy SSE) and a Manager that keeps
// the set of Conns in line with the config.
package mcp

import (
	"errors"
	"time"
)

// State is the lifecycle state of a Conn.
type State int

// The states of a Conn. See DESIGN.md, MCP client.
const (
	StateDisabled State = iota
	StateAwaitingApproval
	StateConnecting
	StateConnected
	StateReconnecting
	StateFailed
	StateStopped
)

var stateNames = [...]string{
	StateDisabled:         "disabled",
	StateAwaitingApproval: "awaitingApproval",
	StateConnecting:       "connecting",
	StateConnected:        "connected",
	StateReconnecting:     "reconnecting",
	StateFailed:           "failed",
	StateStopped:          "stopped",
}

// String returns the state's name as PROTOCOL.md spells it.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// ServerInfo is the name and version a server reported in initialize.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Status is a snapshot of a Conn, shaped like PROTOCOL.md's ServerStatus.
// It never holds a secret: header values and env values are not part of it.
type Status struct {
	Name            string        `json:"name"`
	Scope           string        `json:"scope"`               // "user" or "project"
	Type            string        `json:"type"`                // "local" or "remote"
	Transport       string        `json:"transport,omitempty"` // "stdio", "http" or "sse"
	State           State         `json:"-"`
	ToolCount       int           `json:"toolCount"`
	PID             int           `json:"pid,omitempty"`
	ServerInfo      *ServerInfo   `json:"serverInfo,omitempty"`
	ProtocolVersion string        `json:"protocolVersion,omitempty"`
	ConnectedAt     time.Time     `json:"-"`
	LastPing        time.Duration `json:"-"`
	LastError       string        `json:"lastError,omitempty"`
	StderrTail      []string      `json:"stderrTail,omitempty"`
}

// Errors a call or a start may wrap. Callers test them with errors.Is.
var (
	// ErrConnectionLost means the transport failed (the process exited, the
	// connection reset) while a request was in flight: the request may or may
	// not have reached the server.
	ErrConnectionLost = errors.New("connection to MCP server lost")
	// ErrNotConnected means the server is not connected (stopped, failed,
	// disabled) and the request was never sent.
	ErrNotConnected = errors.New("MCP server not connected")
	// ErrRetrying means a connect attempt failed and the Conn goes on
	// trying in the background (see Conn.Start).
	ErrRetrying = errors.New("retrying in the background")
	// ErrNoServer means no server of that name is configured.
	ErrNoServer = errors.New("no such MCP server")
)
