package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/narad/narad/domain/access/accesstest"
)

// matrixPassword is every matrix account's password.
const matrixPassword = "matrix-pw"

// matrixNode is a node set up for the authorization matrix: one account per
// role, the shared topics of every kind with their owners, and fresh
// topics and accounts for the cases that destroy what they name.
type matrixNode struct {
	t   *testing.T
	url string
}

func (m matrixNode) root(method, path, body string) answer {
	m.t.Helper()
	return call(m.t, m.url, "admin", rootPassword, method, path, body)
}

func (m matrixNode) as(role accesstest.Role, method, path, body string) answer {
	m.t.Helper()
	if role.Letter == accesstest.Root {
		return m.root(method, path, body)
	}
	return call(m.t, m.url, role.Username, matrixPassword, method, path, body)
}

func grantsJSON(gs map[string][]string) string {
	parts := make([]string, 0, len(gs))
	for action, patterns := range gs {
		if len(patterns) == 0 {
			parts = append(parts, fmt.Sprintf(`{"action":%q}`, action))
			continue
		}
		parts = append(parts, fmt.Sprintf(`{"action":%q,"patterns":["%s"]}`, action, strings.Join(patterns, `","`)))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// roleByLetter returns the matrix role named by letter.
func roleByLetter(letter byte) accesstest.Role {
	for _, r := range accesstest.Roles() {
		if r.Letter == letter {
			return r
		}
	}
	panic("no role " + string(letter))
}

// setUp creates the accounts and topics. The creator role creates the
// topics it owns while it may (create on orders-* and team-*), then is cut
// back to its matrix grants, so team-x is owned but outside its grants.
func (m matrixNode) setUp(cases []accesstest.Case, idx []int) {
	m.t.Helper()
	for _, r := range accesstest.Roles() {
		if r.Letter == accesstest.Root || r.Letter == accesstest.Open {
			continue
		}
		gs := r.Grants
		if r.Letter == accesstest.Creator {
			gs = map[string][]string{"create": {"orders-*", "team-*"}}
		}
		m.root("POST", "/v1/users", fmt.Sprintf(`{"username":%q,"password":%q,"grants":%s}`, r.Username, matrixPassword, grantsJSON(gs))).
			want(m.t, "create "+r.Username, 201, "")
	}
	m.root("POST", "/v1/users", `{"username":"target","password":"pw","grants":[]}`).want(m.t, "create target", 201, "")
	for _, k := range accesstest.Kinds() {
		m.createKind(k, k.Name)
	}
	for n, c := range cases {
		switch c.Route.Name {
		case "delete":
			m.createKind(c.Kind, fmt.Sprintf("%s-d%d", c.Kind.Name, idx[n]))
		case "delete user":
			m.root("POST", "/v1/users", fmt.Sprintf(`{"username":"del-%d","password":"pw"}`, idx[n])).want(m.t, "create del user", 201, "")
		}
	}
	creator := roleByLetter(accesstest.Creator)
	m.root("PUT", "/v1/users/"+creator.Username+"/grants", fmt.Sprintf(`{"grants":%s}`, grantsJSON(creator.Grants))).
		want(m.t, "cut creator back", 200, "")
}

// createKind creates name as kind k's owner would.
func (m matrixNode) createKind(k accesstest.Kind, name string) {
	m.t.Helper()
	owner := roleByLetter(accesstest.Root)
	if k.Owner == roleByLetter(accesstest.Creator).Username {
		owner = roleByLetter(accesstest.Creator)
	}
	m.as(owner, "POST", "/v1/topics", fmt.Sprintf(`{"name":%q}`, name)).want(m.t, "create "+name, 201, "")
}

// request fills case i's route with its names.
func request(c accesstest.Case, i int) (path, body string) {
	t := c.Kind.Name
	switch c.Route.Name {
	case "delete":
		t = fmt.Sprintf("%s-d%d", c.Kind.Name, i)
	case "create":
		t = fmt.Sprintf("%s-c%d", c.Kind.Name, i)
	}
	parent := accesstest.Mine.Name
	if c.Route.Slot == accesstest.ChildOfNo {
		parent = accesstest.NoMatch.Name
	}
	user := "target"
	if c.Route.Name == "delete user" {
		user = fmt.Sprintf("del-%d", i)
	}
	r := strings.NewReplacer("{t}", t, "{p}", parent, "{u}", user, "{new}", fmt.Sprintf("%s-%d", accesstest.NewName, i))
	return r.Replace(c.Route.Path), r.Replace(c.Route.Body)
}

// replay sends every case as send sends it and checks the spec's verdict:
// a refusal is 403 with the route's message, an allowed request anything
// but 401 and 403.
func replay(t *testing.T, cases []accesstest.Case, idx []int, send func(c accesstest.Case, path, body string) answer) {
	t.Helper()
	for n, c := range cases {
		path, body := request(c, idx[n])
		a := send(c, path, body)
		name := fmt.Sprintf("%s as %c on %q (%s %s)", c.Route.Name, c.Role.Letter, c.Kind.Name, c.Route.Method, path)
		switch {
		case c.Allowed() && (a.status == http.StatusForbidden || a.status == http.StatusUnauthorized):
			t.Errorf("%s: refused %d %q, the spec allows it", name, a.status, a.body)
		case !c.Allowed() && (a.status != http.StatusForbidden || a.errorText() != c.Route.Message(c.Role.Letter)):
			t.Errorf("%s: got %d %q, want 403 %q", name, a.status, a.body, c.Route.Message(c.Role.Letter))
		}
	}
}

// ensure that the node answers every cell of the authorization matrix (the
// domain rule's table, domain/access/accesstest) as the spec says: every
// role and pattern × every route × matched, unmatched and owned topics,
// with security on, and with it off (every route open but the remotes').
func TestAuthorizationMatrixOverHTTP(t *testing.T) {
	var secured, open []accesstest.Case
	var securedIdx, openIdx []int
	for i, c := range accesstest.Cases() {
		if c.Role.Letter == accesstest.Open {
			open, openIdx = append(open, c), append(openIdx, i)
		} else {
			secured, securedIdx = append(secured, c), append(securedIdx, i)
		}
	}
	t.Run("secured", func(t *testing.T) {
		n := startSecured(t, rootPassword)
		m := matrixNode{t: t, url: n.url}
		m.setUp(secured, securedIdx)
		replay(t, secured, securedIdx, func(c accesstest.Case, path, body string) answer {
			return m.as(c.Role, c.Route.Method, path, body)
		})
	})
	t.Run("security_off", func(t *testing.T) {
		n := startNode(t, t.TempDir(), freePorts(t))
		for _, k := range accesstest.Kinds() {
			call(t, n.url, "", "", "POST", "/v1/topics", fmt.Sprintf(`{"name":%q}`, k.Name)).want(t, "create "+k.Name, 201, "")
		}
		for i, c := range open {
			switch c.Route.Name {
			case "delete":
				call(t, n.url, "", "", "POST", "/v1/topics", fmt.Sprintf(`{"name":"%s-d%d"}`, c.Kind.Name, openIdx[i])).want(t, "create", 201, "")
			case "delete user":
				call(t, n.url, "", "", "POST", "/v1/users", fmt.Sprintf(`{"username":"del-%d","password":"pw"}`, openIdx[i])).want(t, "create user", 201, "")
			}
		}
		call(t, n.url, "", "", "POST", "/v1/users", `{"username":"target","password":"pw"}`).want(t, "create target", 201, "")
		replay(t, open, openIdx, func(c accesstest.Case, path, body string) answer {
			return call(t, n.url, "", "", c.Route.Method, path, body)
		})
	})
}
