package meta

import (
	"fmt"
	"strings"
)

// Key layout of the views. Names never contain '/', so "<prefix><name>/" bounds
// exactly one topic's rows. Numbers are fixed-width decimal so byte order is
// numeric order. Part of the on-disk format: do not change.
const (
	prefixTopic     = "topic/"   // topic/<name> → Topic
	prefixTopicFold = "topicci/" // topicci/<lowercase name> → name
	prefixSchema    = "schema/"  // schema/<topic>/<%010d version> → SchemaVersion
	prefixAssign    = "assign/"  // assign/<topic>/<%010d partition> → Assignment
	prefixMember    = "member/"  // member/<id> → Member
	prefixTomb      = "tomb/"    // tomb/<id> → Tombstone
	prefixUser      = "user/"    // user/<username> → User
	prefixRemote    = "remote/"  // remote/<name> → Remote
	prefixSeals     = "seals/"   // seals/<key version> → decimal seal count
	prefixJournal   = "journal/" // journal/<%020d seq> → JournalEntry
	keySchemaBytes  = "stat/schema-bytes"
	keyRemoteSalt   = "stat/remote-salt"
	keyJournalNext  = "stat/journal-next"
)

func topicKey(name string) []byte      { return []byte(prefixTopic + name) }
func topicFoldKey(name string) []byte  { return []byte(prefixTopicFold + strings.ToLower(name)) }
func schemaPrefix(topic string) []byte { return []byte(prefixSchema + topic + "/") }
func schemaKey(topic string, v int32) []byte {
	return []byte(fmt.Sprintf("%s%s/%010d", prefixSchema, topic, v))
}
func assignPrefix(topic string) []byte { return []byte(prefixAssign + topic + "/") }
func assignKey(topic string, p int32) []byte {
	return []byte(fmt.Sprintf("%s%s/%010d", prefixAssign, topic, p))
}
func memberKey(id string) []byte   { return []byte(prefixMember + id) }
func tombKey(id string) []byte     { return []byte(prefixTomb + id) }
func userKey(name string) []byte   { return []byte(prefixUser + name) }
func remoteKey(name string) []byte { return []byte(prefixRemote + name) }
func sealsKey(v string) []byte     { return []byte(prefixSeals + v) }
func journalKey(seq uint64) []byte { return []byte(fmt.Sprintf("%s%020d", prefixJournal, seq)) }
