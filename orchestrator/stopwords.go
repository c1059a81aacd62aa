package orchestrator

import "strings"

// stopWords carry no meaning in a query or a tool's text: the English stop
// words of NLTK, as the snowball package (github.com/kljensen/snowball)
// lists them. A query is often a user's whole request ("could you tell me
// what files are in my folder"), and without these its pronouns and
// auxiliaries match tools by chance.
var stopWords = wordSet(`a about above after again against all am an and any are as at be because been
	before being below between both but by can did do does doing don down during each few for from further
	had has have having he her here hers herself him himself his how i if in into is it its itself just me
	more most my myself no nor not now of off on once only or other our ours ourselves out over own s same
	she should so some such t than that the their theirs them themselves then there these they this those
	through to too under until up very was we were what when where which while who whom why will with you
	your yours yourself yourselves`)

// maxStopWord is the length of the longest stop word.
const maxStopWord = len("yourselves")

// wordSet returns the set of the space-separated words of s.
func wordSet(s string) map[string]bool {
	set := make(map[string]bool)
	for _, w := range strings.Fields(s) {
		set[w] = true
	}
	return set
}
