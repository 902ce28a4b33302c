package metatest

import (
	"sort"
	"strings"
)

// leadingComments returns, per block, the comment lines just before it.
func leadingComments(src string) map[int][]string {
	out := make(map[int][]string)
	var pending []string
	blockIdx, inBlock := 0, false
	for _, line := range strings.Split(src, "\n") {
		switch {
		case inBlock && line == "":
			inBlock = false
		case inBlock:
		case strings.HasPrefix(line, "#"):
			pending = append(pending, line)
		case line != "":
			out[blockIdx] = pending
			pending, inBlock = nil, true
			blockIdx++
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
