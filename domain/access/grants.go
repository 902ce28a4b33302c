package access

import (
	"fmt"
	"strings"

	"github.com/narad/narad/domain/meta"
)

// ValidGrants checks a grant list as a client sent it (api.md §0.6, §2.16):
// produce, consume and create need at least one pattern, admin none; a
// pattern is a topic name (up to 255 characters) with an optional single
// trailing '*', or '*' alone. The refusal's message is the one the spec
// names.
func ValidGrants(grants []meta.Grant) error {
	for _, g := range grants {
		if err := validGrant(g); err != nil {
			return err
		}
	}
	return nil
}

func validGrant(g meta.Grant) error {
	switch g.Action {
	case ActionAdmin:
		if len(g.Patterns) > 0 {
			return invalidArg("admin grants are global and must not carry patterns")
		}
		return nil
	case ActionProduce, ActionConsume, ActionCreate:
	default:
		return invalidArg(fmt.Sprintf("unknown grant action %q", g.Action))
	}
	if len(g.Patterns) == 0 {
		return invalidArg(fmt.Sprintf("grant %q requires at least one topic pattern", g.Action))
	}
	for _, p := range g.Patterns {
		if p == "" {
			return invalidArg(fmt.Sprintf("grant %q has an empty pattern", g.Action))
		}
		if !validPattern(p) {
			return invalidArg(fmt.Sprintf("grant %q pattern %q must be a topic name with an optional trailing '*'", g.Action, p))
		}
	}
	return nil
}

func validPattern(p string) bool {
	if p == "*" {
		return true
	}
	body := strings.TrimSuffix(p, "*")
	return body != "" && body != "." && body != ".." && len(body) <= meta.TopicNameMaxLegacyChars &&
		strings.IndexFunc(body, notNameRune) < 0
}
