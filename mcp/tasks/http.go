package tasks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
)

// SetNameHeader gives a Streamable HTTP request of a task method the
// Mcp-Name header SEP-2663 has it carry: the task id of its body. The
// go-sdk sets Mcp-Method for every request but Mcp-Name only for its own
// methods. Other requests are left alone.
func SetNameHeader(req *http.Request) {
	if !strings.HasPrefix(req.Header.Get("Mcp-Method"), "tasks/") || req.Header.Get("Mcp-Name") != "" || req.GetBody == nil {
		return
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	var msg struct {
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if json.NewDecoder(body).Decode(&msg) == nil && msg.Params.TaskID != "" {
		req.Header.Set("Mcp-Name", msg.Params.TaskID)
	}
}

// FoldHTTP makes the body of the answer to a Streamable HTTP tools/call
// one whose task answer, if any, is folded (see [Fold]): a JSON body is
// read whole when first read (the caller bounds it), an event stream event
// by event. Other responses are left alone.
func FoldHTTP(req *http.Request, resp *http.Response) {
	if req.Header.Get("Mcp-Method") != "tools/call" || resp.StatusCode != http.StatusOK {
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		resp.Body = &foldedJSON{rc: resp.Body}
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	case "text/event-stream":
		resp.Body = &foldedStream{rc: resp.Body, in: bufio.NewReader(resp.Body)}
	}
}

// foldMessage folds a JSON-RPC message's result.
func foldMessage(msg []byte) ([]byte, bool) {
	if !bytes.Contains(msg, []byte(`"task"`)) {
		return msg, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg, false
	}
	res, ok := Fold(m["result"])
	if !ok {
		return msg, false
	}
	m["result"] = res
	out, err := json.Marshal(m)
	if err != nil {
		return msg, false
	}
	return out, true
}

type foldedJSON struct {
	rc  io.ReadCloser
	buf *bytes.Reader
	err error
}

func (b *foldedJSON) Read(p []byte) (int, error) {
	if b.buf == nil {
		body, err := io.ReadAll(b.rc)
		if err != nil {
			b.err = err
		}
		body, _ = foldMessage(body)
		b.buf = bytes.NewReader(body)
	}
	n, err := b.buf.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *foldedJSON) Close() error { return b.rc.Close() }

// foldedStream passes an event stream on event by event, the data of an
// event that holds a task answer folded.
type foldedStream struct {
	rc  io.ReadCloser
	in  *bufio.Reader
	out bytes.Buffer // what is ready to read
	err error
}

func (s *foldedStream) Read(p []byte) (int, error) {
	for s.out.Len() == 0 && s.err == nil {
		s.err = s.nextEvent()
	}
	if s.out.Len() > 0 {
		return s.out.Read(p)
	}
	return 0, s.err
}

// nextEvent moves the next event (its lines up to the blank line that
// ends it) to out.
func (s *foldedStream) nextEvent() error {
	var lines [][]byte
	for {
		line, err := s.in.ReadBytes('\n')
		if len(line) > 0 {
			lines = append(lines, line)
		}
		if err != nil {
			s.flush(lines)
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			s.flush(lines)
			return nil
		}
	}
}

// flush writes an event's lines to out, its data folded when it is a
// task answer.
func (s *foldedStream) flush(lines [][]byte) {
	var data [][]byte
	for _, l := range lines {
		if v, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r\n"), []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" ")))
		}
	}
	if len(data) > 0 {
		if folded, ok := foldMessage(bytes.Join(data, []byte("\n"))); ok {
			for _, l := range lines {
				if !bytes.HasPrefix(l, []byte("data:")) {
					if len(bytes.TrimRight(l, "\r\n")) == 0 {
						continue // the end of the event, written last
					}
					s.out.Write(l)
				}
			}
			s.out.WriteString("data: ")
			s.out.Write(folded)
			s.out.WriteString("\n\n")
			return
		}
	}
	for _, l := range lines {
		s.out.Write(l)
	}
}

func (s *foldedStream) Close() error { return s.rc.Close() }
