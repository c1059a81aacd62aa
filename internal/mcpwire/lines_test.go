package mcpwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A LineReader hands on each line whole, the last without a newline, and
// refuses one whose text is over the cap at once; SkipLine reads past it,
// saying its start and size, and so does the next ReadLine when not asked.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("y", 3*LineBufSize)
	tests := []struct {
		name string
		in   string
		max  int
		skip bool // call SkipLine after ErrLineTooLong
		want []string
	}{
		{"lines", "a\r\n\nb\nc", 10, false, []string{"a\r\n", "\n", "b\n", "c", "EOF"}},
		{"at the cap, its end not counted", "abcd\r\nx\n", 4, false, []string{"abcd\r\n", "x\n", "EOF"}},
		{"over the cap", "abcde\nx\n", 4, true, []string{"too long: abcde\n (6 bytes)", "x\n", "EOF"}},
		{"over the cap, not skipped", "abcde\nx\n", 4, false, []string{"too long", "x\n", "EOF"}},
		{"longer than the buffer", long + "\nx", 4 * LineBufSize, false, []string{long + "\n", "x", "EOF"}},
		{"over the cap, longer than the buffer", "{" + long + "\nx\n", 2 * LineBufSize, true, []string{fmt.Sprintf("too long: {%s (%d bytes)", long[:headSize-1], len(long)+2), "x\n", "EOF"}},
		{"over the cap at the end", "x\n" + long, 2 * LineBufSize, true, []string{"x\n", fmt.Sprintf("too long: %s (%d bytes) EOF", long[:headSize], len(long)), "EOF"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewLineReader(strings.NewReader(tc.in), tc.max)
			var got []string
			for range 10 {
				line, err := r.ReadLine()
				switch {
				case errors.Is(err, ErrLineTooLong) && tc.skip:
					head, size, err := r.SkipLine()
					s := fmt.Sprintf("too long: %s (%d bytes)", head, size)
					if err != nil {
						s += " EOF"
					}
					got = append(got, s)
					continue
				case errors.Is(err, ErrLineTooLong):
					got = append(got, "too long")
					continue
				case errors.Is(err, io.EOF):
					got = append(got, "EOF")
				case err != nil:
					t.Fatal(err)
				default:
					got = append(got, string(line))
					continue
				}
				break
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// lineSource is a Source of lines given in advance.
type lineSource [][]jsonrpc.Message

func (s *lineSource) Next(context.Context) (jsonrpc.Message, []jsonrpc.Message, error) {
	if len(*s) == 0 {
		return nil, nil, io.EOF
	}
	line := (*s)[0]
	*s = (*s)[1:]
	if len(line) == 1 {
		return line[0], nil, nil
	}
	return nil, line, nil
}

// A Reader returns a batch's messages one by one, and a line with none
// returns nothing.
func TestReaderQueue(t *testing.T) {
	call := func(n int64) jsonrpc.Message {
		id, _ := jsonrpc.MakeID(float64(n))
		return &jsonrpc.Request{ID: id, Method: "ping"}
	}
	src := lineSource{{call(1)}, {call(2), call(3), call(4)}, nil, {call(5)}}
	r := NewReader(&src)
	var got []int64
	for {
		msg, err := r.Read(t.Context())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msg.(*jsonrpc.Request).ID.Raw().(int64))
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 5}, got); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}
