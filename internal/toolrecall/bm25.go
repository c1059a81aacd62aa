package toolrecall

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

// BM25 is textbook Okapi BM25 (k1 1.2, b 0.75, the idf that stays
// positive) over one text per document, split into lower-case runs of
// letters and digits: no stemming, no stop words, no fields. It is the
// baseline a tool search is measured against, kept apart from FreeCode's
// own so that a change to one never moves the other.
type BM25 struct {
	docs   []map[string]int // term frequencies
	lens   []int
	avgLen float64
	df     map[string]int
}

// NewBM25 indexes texts; a search returns indexes into it.
func NewBM25(texts []string) *BM25 {
	x := &BM25{df: make(map[string]int)}
	total := 0
	for _, text := range texts {
		tf := make(map[string]int)
		words := Words(text)
		for _, w := range words {
			tf[w]++
		}
		for w := range tf {
			x.df[w]++
		}
		x.docs = append(x.docs, tf)
		x.lens = append(x.lens, len(words))
		total += len(words)
	}
	x.avgLen = max(float64(total)/float64(max(len(texts), 1)), 1)
	return x
}

// Search returns the indexes of the k best documents for query, best
// first; equal scores in index order. A document that shares no word with
// the query is not returned.
func (x *BM25) Search(query string, k int) []int {
	const k1, b = 1.2, 0.75
	n := float64(len(x.docs))
	var terms []string
	for _, w := range Words(query) {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	}
	type hit struct {
		doc   int
		score float64
	}
	var hits []hit
	for d, tf := range x.docs {
		var score float64
		for _, t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(x.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(x.lens[d])/x.avgLen))
		}
		if score > 0 {
			hits = append(hits, hit{d, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	out := make([]int, 0, min(k, len(hits)))
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.doc)
	}
	return out
}

// Words splits text into lower-case runs of letters and digits.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
