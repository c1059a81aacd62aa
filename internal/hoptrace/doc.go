// Package hoptrace times the stages of one request through the sidecar,
// for finding where the hop's time goes: from the frontend's request read
// to the MCP server's request written, the server's answer, and from its
// answer read to the frontend's answer written.
//
// It is compiled in only with the build tag hoptrace; without it every
// function is empty and Enabled is false, so the calls left in the hot
// path cost nothing. With it, the stages are taken of one request at a
// time (a benchmark's loop), not of requests that overlap, and Report
// writes each stage's p50 and p90 when the process ends:
//
//	go test -tags hoptrace -run '^$' -bench 'SidecarExecute$' -benchtime 1x ./bench/
//
// builds the benchmark's freecode-serve with the tag too, and each
// sidecar prints its table on the benchmark's stderr as it exits.
package hoptrace

// The points every stage is timed from: a frontend's request read by
// the sidecar, and a server's answer read by its MCP client.
const (
	FromRequest = "request read"
	FromAnswer  = "answer read"
	// FromSent is the request's line written to the server: the span to
	// FromAnswer is the server's round trip as the sidecar sees it.
	FromSent = "request sent"
)
