package config

import (
	"maps"
	"slices"
	"strings"
)

// secretRef is how a value names a secret of the user's store.
const secretRef = "${secret:"

// SecretRefs returns the names of the secrets s references as
// ${secret:NAME} where they are expanded (Server.Expanded): its env values,
// header values, url and OAuth fields; sorted, each once. "$${secret:NAME}"
// is a literal, not a reference; so is one with no closing brace or an
// empty name, which Expand reports. The names are as written: whether a
// store can hold them is the caller's question.
func SecretRefs(s Server) []string {
	var names []string
	add := func(v string) {
		for {
			i := strings.Index(v, secretRef)
			if i < 0 {
				return
			}
			j := strings.IndexByte(v[i:], '}')
			if j < 0 {
				return
			}
			if name := v[i+len(secretRef) : i+j]; name != "" && (i == 0 || v[i-1] != '$') {
				names = append(names, name)
			}
			v = v[i+j+1:]
		}
	}
	for _, v := range slices.Sorted(maps.Values(s.Env)) {
		add(v)
	}
	for _, v := range slices.Sorted(maps.Values(s.Headers)) {
		add(v)
	}
	add(s.URL)
	if o := s.OAuth; o != nil {
		add(o.ClientID)
		add(o.ClientSecret)
		add(o.ClientMetadataURL)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
