package orchestrator

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// The server-level ideas of TestToolSearchRecallIdeas: each server a
// document of its own, its score mixed into its tools'.

// serverIndex is each server as one document for textbook BM25: the name,
// title and description of all its tools, and its extra text.
type serverIndex struct {
	tools    [][]int32 // per server
	postings map[string][]struct {
		srv int32
		tf  float64
	}
	norm []float64
}

func newServerIndex(x *searchIndex, extra map[string]string) *serverIndex {
	si := &serverIndex{postings: make(map[string][]struct {
		srv int32
		tf  float64
	})}
	of := make(map[string]int32)
	var lens []float64
	add := func(s int32, text string) {
		for term := range terms(text) {
			ps := si.postings[term]
			if n := len(ps); n > 0 && ps[n-1].srv == s {
				ps[n-1].tf++
			} else {
				si.postings[term] = append(ps, struct {
					srv int32
					tf  float64
				}{s, 1})
			}
			lens[s]++
		}
	}
	for i, t := range x.tools {
		s, ok := of[t.Server]
		if !ok {
			s = int32(len(si.tools))
			of[t.Server] = s
			si.tools = append(si.tools, nil)
			lens = append(lens, 0)
			add(s, t.Server+" "+extra[t.Server])
		}
		si.tools[s] = append(si.tools[s], int32(i))
		fieldTexts(t, func(f int, text string) {
			if f == fieldName || f == fieldTitle || f == fieldDesc {
				add(s, text)
			}
		})
	}
	var total float64
	for _, l := range lens {
		total += l
	}
	avg := max(total/float64(max(len(lens), 1)), 1)
	for _, l := range lens {
		si.norm = append(si.norm, 0.25+0.75*l/avg)
	}
	return si
}

// scores returns each server's BM25 score for qs (k1 1.2, b 0.75).
func (si *serverIndex) scores(qs []queryTerm) []float64 {
	out := make([]float64, len(si.tools))
	n := float64(len(si.tools))
	for _, q := range qs {
		ps := si.postings[q.term]
		df := float64(len(ps))
		idf := q.weight * math.Log(1+(n-df+0.5)/(df+0.5))
		for _, p := range ps {
			w := p.tf / si.norm[p.srv]
			out[p.srv] += idf * w / (1.2 + w)
		}
	}
	return out
}

// withServers ranks by each tool's score plus alpha times its server's,
// scaled so the best server's adds alpha times the best tool's score;
// only the first top servers add (0: all).
func withServers(x *searchIndex, si *serverIndex, qs []queryTerm, alpha float64, top int) []hit {
	scores := make([]float64, len(x.tools))
	var best float64
	for _, h := range rankAll(x, qs) {
		scores[h.doc] = h.score
		best = max(best, h.score)
	}
	ss := si.scores(qs)
	order := make([]int, len(ss))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ss[b], ss[a]) })
	bestSrv := ss[order[0]]
	for rank, s := range order {
		if ss[s] == 0 || top > 0 && rank >= top {
			break
		}
		for _, d := range si.tools[s] {
			scores[d] += alpha * ss[s] / bestSrv * best
		}
	}
	var hs []hit
	for d, v := range scores {
		if v > 0 {
			hs = append(hs, hit{int32(d), v})
		}
	}
	sortHits(hs)
	return hs
}

// serverSettings are withServers' settings; keep > 0 keeps the first keep
// tools of the ranking as it is and fills the rest from withServers'.
func serverSettings(x *searchIndex, si *serverIndex, keep int) []recallSetting {
	var out []recallSetting
	for _, alpha := range []float64{0.05, 0.1, 0.2, 0.3, 0.5, 1} {
		for _, top := range []int{1, 2, 3, 0} {
			label := fmt.Sprintf("weight %.2f, the first %d servers", alpha, top)
			if top == 0 {
				label = fmt.Sprintf("weight %.2f, every server", alpha)
			}
			out = append(out, recallSetting{label, func(q string) []*Tool {
				qs := queryTerms(q)
				found := topTools(x, rankAll(x, qs), keep)
				for _, t := range topTools(x, withServers(x, si, qs, alpha, top), 20) {
					if len(found) < 10 && !slices.Contains(found, t) {
						found = append(found, t)
					}
				}
				return found
			}})
		}
	}
	return out
}
