package orchestrator

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// BM25's parameters: k1 bounds what repeating a word adds, b how much a
// long field is discounted. k1 is above the usual 1.2: a tool's words are
// few, and a word its name and description both hold says more than one
// either holds alone (measured on LiveMCPBench's even tasks: 2 found more
// than 1.2 or 3).
var (
	bm25K1 = 2.0
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
	byName   map[string]int32     // each tool's id and alias
}

// newSearchIndex indexes tools.
func newSearchIndex(tools []*Tool) *searchIndex {
	x := &searchIndex{tools: tools, postings: make(map[string][]posting), norm: make([][numFields]float64, len(tools)),
		byName: make(map[string]int32, len(tools))}
	lens := make([][numFields]int, len(tools))
	var total [numFields]int
	for i, t := range tools {
		doc := int32(i)
		x.byName[t.ID] = doc
		if t.alias != "" {
			x.byName[t.alias] = doc
		}
		fieldTexts(t, func(f int, text string) {
			for term := range terms(text) {
				// The tool's posting is the term's last if the term
				// occurred in it already: one map lookup per word.
				ps := x.postings[term]
				if n := len(ps); n > 0 && ps[n-1].doc == doc {
					if ps[n-1].tf[f] < math.MaxUint16 {
						ps[n-1].tf[f]++
					}
				} else {
					p := posting{doc: doc}
					p.tf[f] = 1
					x.postings[term] = append(ps, p)
				}
				lens[i][f]++
			}
		})
		for f := range numFields {
			total[f] += lens[i][f]
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

// queryTerm is one term of a query and what it counts for: 1 for the
// query's own words, less for those added from the vocabulary.
type queryTerm struct {
	term   string
	weight float64
}

// A query's first maxQueryBytes are read, and its first maxQueryTerms
// distinct words count: a query longer than that is a text, not a query
// (what a search costs must not be the caller's to choose).
const (
	maxQueryBytes = 4 << 10
	maxQueryTerms = 64
)

// queryTerms returns the distinct terms of query, its own first (at most
// maxQueryTerms), then what the vocabulary adds for them.
func queryTerms(query string) []queryTerm {
	var qs []queryTerm
	has := func(t string) bool {
		return slices.ContainsFunc(qs, func(q queryTerm) bool { return q.term == t })
	}
	if len(query) > maxQueryBytes {
		query = strings.ToValidUTF8(query[:maxQueryBytes], "")
	}
	for term := range terms(query) {
		if !has(term) {
			qs = append(qs, queryTerm{term, 1})
			if len(qs) == maxQueryTerms {
				break
			}
		}
	}
	for _, q := range qs {
		for _, syn := range expansions(q.term) {
			if !has(syn) {
				qs = append(qs, queryTerm{syn, expansionWeight})
			}
		}
	}
	return qs
}

// search returns the index's tools that match query, best first, at most
// limit of them (0 only counts), leaving out those skip reports (nil skips
// none), and how many more matched.
func (x *searchIndex) search(query string, limit int, skip func(*Tool) bool) (found []*Tool, more int) {
	if limit < 0 || len(x.tools) == 0 {
		return nil, 0
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
	x.score(queryTerms(query), sc)
	// The best limit, kept sorted: most candidates fall below the last
	// kept one and cost one comparison (and one skip, to be counted).
	top := make([]hit, 0, limit+1)
	for _, doc := range sc.touched {
		if skip != nil && skip(x.tools[doc]) {
			continue
		}
		h := hit{doc, scores[doc]}
		if len(top) == limit && (limit == 0 || !h.better(top[limit-1])) {
			more++
			continue
		}
		i := len(top)
		for i > 0 && h.better(top[i-1]) {
			i--
		}
		top = slices.Insert(top, i, h)
		if len(top) > limit {
			top = top[:limit]
			more++
		}
	}
	found = make([]*Tool, len(top))
	for i, h := range top {
		found[i] = x.tools[h.doc]
	}
	return found, more
}

// score adds to sc each tool's BM25F score for qs, noting in sc.touched
// each tool that had none before.
func (x *searchIndex) score(qs []queryTerm, sc *scratch) {
	n := float64(len(x.tools))
	for _, q := range qs {
		ps := x.postings[q.term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := q.weight * math.Log(1+(n-df+0.5)/(df+0.5))
		for _, p := range ps {
			var w float64
			for f := range numFields {
				if p.tf[f] > 0 {
					w += fieldWeights[f] * float64(p.tf[f]) / x.norm[p.doc][f]
				}
			}
			if sc.scores[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			sc.scores[p.doc] += idf * w / (bm25K1 + w)
		}
	}
}

// lookup returns the tool whose id or alias is name.
func (x *searchIndex) lookup(name string) (*Tool, bool) {
	i, ok := x.byName[name]
	if !ok {
		return nil, false
	}
	return x.tools[i], true
}

// terms yields the search terms of text: its words split at anything that
// is not a letter or digit (so "__", "_", "-", ".", spaces), at camelCase
// humps ("listIssues", "HTTPServer"), between letters and digits, and
// around Chinese, Japanese and Korean, whose runs yield each pair of
// neighbouring characters (cjkTerms); lower-cased, plurals reduced to their
// singular, stop words and single letters or digits left out.
func terms(text string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := -1 // where the current word starts, if one has
		var prev rune
		// flush yields the word that ends at end. Words are slices of
		// text, lower-cased (a copy only when it had capitals): an
		// index of thousands of tools is mostly this loop.
		flush := func(end int) bool {
			if start < 0 {
				return true
			}
			word := text[start:end]
			start = -1
			first, size := utf8.DecodeRuneInString(word)
			switch {
			case isCJK(first):
				return cjkTerms(word, yield)
			case size == len(word):
				return true // a single letter or digit
			}
			w := strings.ToLower(word)
			return len(w) <= maxStopWord && stopWords[w] || yield(stem(w))
		}
		for i := 0; i < len(text); {
			r, size := rune(text[i]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRuneInString(text[i:])
			}
			if !isWordRune(r) {
				if !flush(i) {
					return
				}
				i += size
				continue
			}
			// A lower-case ASCII letter after an ASCII letter, most of
			// any text, never starts a word.
			if start >= 0 && !('a' <= r && r <= 'z' && ('a' <= prev && prev <= 'z' || 'A' <= prev && prev <= 'Z')) {
				next, _ := utf8.DecodeRuneInString(text[i+size:])
				if (boundary(prev, r, next) || isCJK(prev) != isCJK(r)) && !flush(i) {
					return
				}
			}
			if start < 0 {
				start = i
			}
			prev = r
			i += size
		}
		flush(len(text))
	}
}

// isWordRune reports whether r is part of a word: a letter or a digit.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
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
