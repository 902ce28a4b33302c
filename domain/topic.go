package domain

import (
	"fmt"
	"strings"
)

// Topic name limits (api.md §0.6).
const (
	// TopicNameMaxLen bounds names of new topics.
	TopicNameMaxLen = 200
	// TopicNameLegacyMaxLen bounds names older releases created; they keep working.
	TopicNameLegacyMaxLen = 255
)

// ValidateNewTopicName checks the rule for creating a topic: 1 to 200
// characters from A-Z a-z 0-9 . _ -, not "." or "..".
func ValidateNewTopicName(name string) error {
	return validateTopicName(name, TopicNameMaxLen)
}

// ValidateTopicName checks a name that may belong to an existing topic
// (up to 255 characters). Storage uses it before building any path.
func ValidateTopicName(name string) error {
	return validateTopicName(name, TopicNameLegacyMaxLen)
}

func validateTopicName(name string, maxLen int) error {
	switch {
	case name == "":
		return fmt.Errorf("topic name is empty: %w", ErrInvalidTopicName)
	case len(name) > maxLen:
		return fmt.Errorf("topic name longer than %d characters: %w", maxLen, ErrInvalidTopicName)
	case name == "." || name == "..":
		return fmt.Errorf("topic name %q is reserved: %w", name, ErrInvalidTopicName)
	}
	for i := 0; i < len(name); i++ {
		if !topicNameChar(name[i]) {
			return fmt.Errorf("topic name %q: character %q not in A-Z a-z 0-9 . _ -: %w", name, name[i], ErrInvalidTopicName)
		}
	}
	return nil
}

func topicNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// NamesCollide reports whether two distinct topic names would share one
// directory on a case-insensitive filesystem (api.md §0.6: refused with 409).
func NamesCollide(a, b string) bool {
	return a != b && strings.EqualFold(a, b)
}
