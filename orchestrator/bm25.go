package orchestrator

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The fields a tool is searched by, and their weights (BM25F): a word of
// the name says more about a tool than a word of its title, which says
// more than one of its description.
const (
	fieldName = iota // the id: server name and tool name
	fieldTitle
	fieldDesc
	numFields
)

var fieldWeights = [numFields]float64{fieldName: 3, fieldTitle: 2, fieldDesc: 1}

// BM25's parameters, at their usual values: k1 bounds what repeating a
// word adds, b how much a long field is discounted.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// posting is one tool a term occurs in, with the term's frequency in each
// field.
type posting struct {
	doc int32
	tf  [numFields]uint16
}

// searchIndex is an inverted index of a set of tools for BM25F ranking.
// It is immutable once built.
type searchIndex struct {
	tools    []*Tool
	postings map[string][]posting
	norm     [][numFields]float64 // per tool and field: 1 - b + b*len/avgLen
}

// newSearchIndex indexes tools.
func newSearchIndex(tools []*Tool) *searchIndex {
	x := &searchIndex{tools: tools, postings: make(map[string][]posting), norm: make([][numFields]float64, len(tools))}
	lens := make([][numFields]int, len(tools))
	var total [numFields]int
	counts := make(map[string]*[numFields]uint16)
	for i, t := range tools {
		clear(counts)
		for f, text := range [numFields]string{fieldName: t.ID, fieldTitle: t.Title, fieldDesc: t.Description} {
			for term := range terms(text) {
				c := counts[term]
				if c == nil {
					c = new([numFields]uint16)
					counts[term] = c
				}
				if c[f] < math.MaxUint16 {
					c[f]++
				}
				lens[i][f]++
			}
			total[f] += lens[i][f]
		}
		for term, c := range counts {
			x.postings[term] = append(x.postings[term], posting{doc: int32(i), tf: *c})
		}
	}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = max(float64(total[f])/float64(max(len(tools), 1)), 1)
	}
	for i := range tools {
		for f := range numFields {
			x.norm[i][f] = 1 - bm25B + bm25B*float64(lens[i][f])/avg[f]
		}
	}
	return x
}

// hit is one ranked tool.
type hit struct {
	doc   int32
	score float64
}

// better reports whether a ranks before b: a higher score, or an equal one
// earlier in the registry's order, so that a result does not depend on the
// order of the query's words.
func (a hit) better(b hit) bool {
	return a.score > b.score || a.score == b.score && a.doc < b.doc
}

// scratch is one search's per-tool scores, reused: a search over thousands
// of tools should not allocate, and clear, an array of them each time.
type scratch struct {
	scores  []float64
	touched []int32
}

var scratchPool sync.Pool

// search returns the index's tools that match query, best first, at most
// limit of them, leaving out those skip reports (nil skips none).
func (x *searchIndex) search(query string, limit int, skip func(*Tool) bool) []*Tool {
	if limit <= 0 || len(x.tools) == 0 {
		return nil
	}
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil || len(sc.scores) < len(x.tools) {
		sc = &scratch{scores: make([]float64, len(x.tools))}
	}
	defer func() {
		for _, doc := range sc.touched {
			sc.scores[doc] = 0
		}
		sc.touched = sc.touched[:0]
		scratchPool.Put(sc)
	}()
	scores := sc.scores
	n := float64(len(x.tools))
	var seen []string
	for term := range terms(query) {
		if slices.Contains(seen, term) {
			continue
		}
		seen = append(seen, term)
		ps := x.postings[term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			var w float64
			for f := range numFields {
				if p.tf[f] > 0 {
					w += fieldWeights[f] * float64(p.tf[f]) / x.norm[p.doc][f]
				}
			}
			if scores[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			scores[p.doc] += idf * w / (bm25K1 + w)
		}
	}
	// The best limit, kept sorted: most candidates fall below the last
	// kept one and cost one comparison.
	top := make([]hit, 0, limit+1)
	for _, doc := range sc.touched {
		h := hit{doc, scores[doc]}
		if len(top) == limit && !h.better(top[limit-1]) {
			continue
		}
		if skip != nil && skip(x.tools[doc]) {
			continue
		}
		i := len(top)
		for i > 0 && h.better(top[i-1]) {
			i--
		}
		top = slices.Insert(top, i, h)
		if len(top) > limit {
			top = top[:limit]
		}
	}
	out := make([]*Tool, len(top))
	for i, h := range top {
		out[i] = x.tools[h.doc]
	}
	return out
}

// stopWords carry no meaning in a query or a description.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "in": true, "is": true, "it": true, "of": true, "on": true, "or": true,
	"that": true, "the": true, "this": true, "to": true, "with": true,
}

// terms yields the search terms of text: its words split at anything that
// is not a letter or digit (so "__", "_", "-", ".", spaces), at camelCase
// humps ("listIssues", "HTTPServer") and between letters and digits;
// lower-cased, plurals reduced to their singular, stop words and single
// characters left out.
func terms(text string) func(func(string) bool) {
	return func(yield func(string) bool) {
		var word []rune
		flush := func() bool {
			if len(word) > 1 {
				w := stem(strings.ToLower(string(word)))
				if !stopWords[w] && !yield(w) {
					return false
				}
			}
			word = word[:0]
			return true
		}
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				if !flush() {
					return
				}
				continue
			}
			if len(word) > 0 {
				prev := word[len(word)-1]
				next, _ := utf8.DecodeRuneInString(text[i:])
				if boundary(prev, r, next) && !flush() {
					return
				}
			}
			word = append(word, r)
		}
		flush()
	}
}

// boundary reports whether a word ends between prev and r (next follows r):
// a lower-case letter or digit before an upper-case one ("listIssues"),
// the last capital of a run before a lower-case letter ("HTTPServer"), and
// a letter next to a digit ("v2").
func boundary(prev, r, next rune) bool {
	switch {
	case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
		return true
	case unicode.IsUpper(r) && unicode.IsUpper(prev) && unicode.IsLower(next):
		return true
	case unicode.IsDigit(r) != unicode.IsDigit(prev):
		return true
	}
	return false
}

// stem reduces an English plural to its singular ("issues", "entries",
// "branches"), so a query in either number finds the other. Nothing more:
// a stemmer that also cut "-ing" and "-ed" would need to restore the "e"
// of "create" to match "creating".
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") ||
		strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}
