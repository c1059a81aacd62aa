package toolid

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// aliasHashLen is how many hex characters of a hash end an alias.
const aliasHashLen = 8

// aliasKeep is how many characters of the id an alias starts with (fewer
// when they end in underscores): with "_" and the hash, at most MaxNameLen.
const aliasKeep = MaxNameLen - 1 - aliasHashLen

// Alias returns the alias of an id longer than MaxNameLen: its first 55
// characters without trailing underscores, "_", and 8 hex characters of
// the id's SHA-256, at most MaxNameLen characters in all. Shorter ids have
// no alias (""). The registry may hand out another alias (Aliases) when
// this one is taken by a tool's id.
func Alias(id string) string {
	if len(id) <= MaxNameLen {
		return ""
	}
	var buf [MaxNameLen]byte
	return string(AppendAlias(buf[:0], id))
}

// maxStackHash is the longest id AppendAlias hashes without allocating.
const maxStackHash = 1024

// AppendAlias appends Alias(id) to dst. It does not allocate when dst has
// room and id is at most 1 KiB, so a permission check can compute it on
// every call.
func AppendAlias(dst []byte, id string) []byte {
	if len(id) <= MaxNameLen {
		return dst
	}
	var sum [sha256.Size]byte
	if len(id) <= maxStackHash {
		var b [maxStackHash]byte
		n := copy(b[:], id)
		sum = sha256.Sum256(b[:n])
	} else {
		sum = sha256.Sum256([]byte(id))
	}
	dst = append(dst, strings.TrimRight(id[:aliasKeep], "_")...)
	dst = append(dst, '_')
	return hex.AppendEncode(dst, sum[:aliasHashLen/2])
}

// aliasVariant is Alias with another hash when k > 0: the k-th
// alternative, for an alias that is taken by a tool's id.
func aliasVariant(id string, k int) string {
	if k == 0 {
		return Alias(id)
	}
	return strings.TrimRight(id[:aliasKeep], "_") + "_" + hashHex(fmt.Sprintf("%s#%d", id, k), aliasHashLen)
}

// Aliases returns an alias for every id of one server's tools that is
// longer than MaxNameLen: Alias(id), or when that is another tool's id or
// alias, the first alternative that is neither. Without this, a server
// could name a tool exactly like another tool's alias: the provider would
// see one name twice (and reject the whole tools array), and a call by that
// name would reach only one of them. The result depends only on the set of
// ids: aliases are handed out in id order, and an alias moves to an
// alternative hash only when a collision forces it.
func Aliases(ids []string) map[string]string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	used := make(map[string]bool, len(sorted))
	for _, id := range sorted {
		used[id] = true
	}
	out := map[string]string{}
	for _, id := range sorted {
		if len(id) <= MaxNameLen {
			continue
		}
		for k := 0; ; k++ {
			if a := aliasVariant(id, k); !used[a] || k >= 1000 {
				out[id] = a
				used[a] = true
				break
			}
		}
	}
	return out
}

// LooksLikeAlias reports whether s has the form of an alias: at most
// MaxNameLen name characters, starting with Prefix and ending in "_" and 8
// lowercase hex characters. A short id may have that form too; what makes
// a name an alias is that the registry gave it to a tool.
func LooksLikeAlias(s string) bool {
	n := len(s)
	if n > MaxNameLen || n <= len(Prefix)+1+aliasHashLen || !strings.HasPrefix(s, Prefix) || s[n-1-aliasHashLen] != '_' {
		return false
	}
	for i := n - aliasHashLen; i < n; i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return onlyNameChars(s)
}
