package accesstest

// The 403 messages as the spec writes them (api.md §2, §4).
const (
	msgProduce = "produce not allowed on this topic"
	msgConsume = "consume not allowed on this topic"
	msgCreate  = "create not allowed on this topic"
	msgNoGrant = "no grant on this topic"
	msgOwner   = "only the topic owner or an admin may modify this topic"
	msgAdmin   = "admin privileges required"
	msgRemotes = "remotes require security"
	msgOthers  = "admin required"
)

// perKind gives the same allowed set for every topic kind.
func perKind(match, noMatch, mine, team string) map[string]string {
	return map[string]string{Match.Name: match, NoMatch.Name: noMatch, Mine.Name: mine, Team.Name: team}
}

func everyKind(roles string) map[string]string { return perKind(roles, roles, roles, roles) }

func noTopic(roles string) map[string]string { return map[string]string{"": roles} }

// Routes returns the route table's rows with the spec's rule for each
// (api.md §1 "Who may call", §4.4).
func Routes() []Route {
	produce := perKind("RAPO", "RAO", "RAPO", "RAO")
	consume := perKind("RACO", "RAO", "RACO", "RAO")
	read := perKind("RAPCKO", "RAO", "RAPCKO", "RAKO")
	manage := perKind("RAO", "RAO", "RAKO", "RAKO")
	admin := noTopic("RAO")
	return []Route{
		{Name: "list topics", Method: "GET", Path: "/v1/topics", Allow: noTopic(AllRoles)},
		{Name: "metrics", Method: "GET", Path: "/metrics", Allow: noTopic(AllRoles)},
		{Name: "create", Method: "POST", Path: "/v1/topics", Body: `{"name":"{t}"}`, Slot: CreateSlot,
			Allow: perKind("RAKO", "RAO", "RAKO", "RAO"), Msg: msgCreate},
		{Name: "create as child", Method: "POST", Path: "/v1/topics", Body: `{"name":"{new}","parent":"{t}"}`, Slot: ParentSlot,
			Allow: manage, Msg: msgOwner, MsgFor: map[byte]string{Producer: msgCreate, Consumer: msgCreate, NoGrant: msgCreate}},
		{Name: "describe", Method: "GET", Path: "/v1/topics/{t}", Slot: TopicSlot, Allow: read, Msg: msgNoGrant},
		{Name: "alter", Method: "PATCH", Path: "/v1/topics/{t}", Body: `{"retention_ms":0}`, Slot: TopicSlot, Allow: manage, Msg: msgOwner},
		{Name: "delete", Method: "DELETE", Path: "/v1/topics/{t}", Slot: TopicSlot, Allow: manage, Msg: msgOwner},
		{Name: "schema", Method: "GET", Path: "/v1/topics/{t}/schema", Slot: TopicSlot, Allow: read, Msg: msgNoGrant},
		{Name: "attach to mine", Method: "POST", Path: "/v1/topics/{p}/children", Body: `{"child":"{t}"}`, Slot: ChildOfMine,
			Allow: manage, Msg: msgOwner, Except: Mine.Name},
		{Name: "attach to billing", Method: "POST", Path: "/v1/topics/{p}/children", Body: `{"child":"{t}"}`, Slot: ChildOfNo,
			Allow: everyKind("RAO"), Msg: msgOwner, Except: NoMatch.Name},
		{Name: "list children", Method: "GET", Path: "/v1/topics/{t}/children", Slot: TopicSlot, Allow: read, Msg: msgNoGrant},
		{Name: "detach from mine", Method: "DELETE", Path: "/v1/topics/{p}/children/{t}", Slot: ChildOfMine,
			Allow: everyKind("RAKO"), Msg: msgOwner},
		{Name: "detach from billing", Method: "DELETE", Path: "/v1/topics/{p}/children/{t}", Slot: ChildOfNo,
			Allow: manage, Msg: msgOwner},
		{Name: "produce", Method: "POST", Path: "/v1/topics/{t}/produce", Body: `m`, Slot: TopicSlot, Allow: produce, Msg: msgProduce},
		{Name: "batch produce", Method: "POST", Path: "/v1/topics/{t}/produce/batch", Body: `{"messages":[{"payload":"m"}]}`, Slot: TopicSlot,
			Allow: produce, Msg: msgProduce},
		{Name: "consume", Method: "GET", Path: "/v1/topics/{t}/consume", Slot: TopicSlot, Allow: consume, Msg: msgConsume},
		{Name: "ack", Method: "POST", Path: "/v1/topics/{t}/ack?receipt_handle=0:0:1", Slot: TopicSlot, Allow: consume, Msg: msgConsume},
		{Name: "create user", Method: "POST", Path: "/v1/users", Body: `{"username":"{new}","password":"pw","grants":[]}`, Allow: admin, Msg: msgAdmin},
		{Name: "list users", Method: "GET", Path: "/v1/users", Allow: admin, Msg: msgAdmin},
		{Name: "get user", Method: "GET", Path: "/v1/users/{u}", Allow: admin, Msg: msgAdmin},
		{Name: "delete user", Method: "DELETE", Path: "/v1/users/{u}", Allow: admin, Msg: msgAdmin},
		{Name: "replace grants", Method: "PUT", Path: "/v1/users/{u}/grants", Body: `{"grants":[]}`, Allow: admin, Msg: msgAdmin},
		{Name: "another's password", Method: "PUT", Path: "/v1/users/{u}/password", Body: `{"new_password":"pw2"}`, Allow: admin, Msg: msgOthers},
		{Name: "members", Method: "GET", Path: "/v1/cluster/members", Allow: admin, Msg: msgAdmin},
		{Name: "moves", Method: "GET", Path: "/v1/cluster/moves", Allow: admin, Msg: msgAdmin},
		{Name: "events", Method: "GET", Path: "/v1/cluster/events", Allow: admin, Msg: msgAdmin},
		{Name: "remotes", Method: "GET", Path: "/v1/remotes", Allow: noTopic("RA"), Msg: msgAdmin, MsgFor: map[byte]string{Open: msgRemotes}},
		{Name: "create remote", Method: "POST", Path: "/v1/remotes", Body: `{}`, Allow: noTopic("RA"), Msg: msgAdmin, MsgFor: map[byte]string{Open: msgRemotes}},
	}
}
