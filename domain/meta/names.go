package meta

import (
	"fmt"
	"strings"
)

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrInvalidEvent)...)
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

func checkCharset(kind, s string, max int) error {
	if s == "" {
		return invalid("%s required", kind)
	}
	if len(s) > max {
		return invalid("%s %q over %d characters", kind, s, max)
	}
	if s == "." || s == ".." {
		return invalid("%s must not be %q", kind, s)
	}
	for i := 0; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return invalid("%s %q has a character outside A-Z a-z 0-9 . _ -", kind, s)
		}
	}
	return nil
}

// ValidNewTopicName checks the rule for creating a topic.
func ValidNewTopicName(name string) error {
	return checkCharset("topic name", name, TopicNameMaxNewChars)
}

// validTopicRef checks a name naming an existing topic (older releases
// allowed up to 255 characters).
func validTopicRef(name string) error {
	return checkCharset("topic name", name, TopicNameMaxLegacyChars)
}

// ValidUsername checks the username rule.
func ValidUsername(name string) error { return checkCharset("username", name, UsernameMaxChars) }

// ValidMemberID checks a node id.
func ValidMemberID(id string) error { return checkCharset("member id", id, MemberIDMaxChars) }

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validTopicID requires an incarnation id: 16 lowercase hex characters.
func validTopicID(id string) error {
	if !isLowerHex(id, topicIDHexChars) {
		return invalid("topic id %q is not 16 lowercase hex characters", id)
	}
	return nil
}

func validEpoch(epoch string) error {
	if !isLowerHex(epoch, epochHexChars) {
		return invalid("attach epoch %q is not 16 lowercase hex characters", epoch)
	}
	return nil
}

func validPartition(p int32) error {
	if p < 0 || p >= PartitionsMaxCount {
		return invalid("partition %d out of range", p)
	}
	return nil
}

func validAddr(kind, addr string) error {
	if addr == "" || len(addr) > AddrMaxBytes || !strings.Contains(addr, ":") {
		return invalid("%s %q is not host:port within %d bytes", kind, addr, AddrMaxBytes)
	}
	return nil
}

// validGrants checks the grant rules: produce/consume/create need at least
// one pattern, admin none; a pattern is a topic name with an optional
// trailing '*', or '*' alone.
func validGrants(grants []Grant) error {
	for _, g := range grants {
		switch g.Action {
		case "admin":
			if len(g.Patterns) > 0 {
				return invalid("admin grants are global and must not carry patterns")
			}
		case "produce", "consume", "create":
			if len(g.Patterns) == 0 {
				return invalid("grant %q requires at least one topic pattern", g.Action)
			}
			for _, p := range g.Patterns {
				if err := validPattern(g.Action, p); err != nil {
					return err
				}
			}
		default:
			return invalid("unknown grant action %q", g.Action)
		}
	}
	return nil
}

func validPattern(action, p string) error {
	if p == "*" {
		return nil
	}
	body := strings.TrimSuffix(p, "*")
	if body == "" || strings.Contains(body, "*") || checkCharset("pattern", body, TopicNameMaxLegacyChars) != nil {
		return invalid("grant %q pattern %q must be a topic name with an optional trailing '*'", action, p)
	}
	return nil
}

func validRetention(ms int64) error {
	if ms < 0 {
		return invalid("retention_ms %d is negative", ms)
	}
	return nil
}

func validOffsets(offsets []int64) error {
	if len(offsets) > PartitionsMaxCount {
		return invalid("%d attach offsets above %d", len(offsets), PartitionsMaxCount)
	}
	for i, o := range offsets {
		if o < 0 {
			return invalid("attach offset %d of partition %d is negative", o, i)
		}
	}
	return nil
}
