package httpclient_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

const bobJSON = `{"username":"bob","grants":[{"action":"produce","patterns":["orders-*"]},{"action":"admin"}],"created_at_ms":1783615560000,"updated_at_ms":1783615561000,"future_field":1}`

var bob = httpclient.User{
	Username:    "bob",
	Grants:      []httpclient.Grant{{Action: "produce", Patterns: []string{"orders-*"}}, {Action: "admin"}},
	CreatedAtMs: 1783615560000,
	UpdatedAtMs: 1783615561000,
}

// ensure that every user call sends the §2.16 method, path, body and headers, and decodes the answer.
func TestUserCallsSendTheRoutesOfTheSpec(t *testing.T) {
	t.Parallel()
	type call func(c *httpclient.Client) (any, error)
	cases := map[string]struct {
		call   call
		answer canned
		method string
		path   string
		body   string
		want   any
	}{
		"create_with_grants": {
			call: func(c *httpclient.Client) (any, error) {
				return c.CreateUser(context.Background(), httpclient.NewUser{Username: "bob", Password: "pw<&>", Grants: bob.Grants})
			},
			answer: jsonAnswer(201, bobJSON), method: http.MethodPost, path: "/v1/users",
			body: `{"username":"bob","password":"pw<&>","grants":[{"action":"produce","patterns":["orders-*"]},{"action":"admin"}]}`,
			want: &bob,
		},
		"create_without_grants": {
			call: func(c *httpclient.Client) (any, error) {
				return c.CreateUser(context.Background(), httpclient.NewUser{Username: "bob", Password: "pw"})
			},
			answer: jsonAnswer(201, `{"username":"bob"}`), method: http.MethodPost, path: "/v1/users",
			body: `{"username":"bob","password":"pw"}`, want: &httpclient.User{Username: "bob"},
		},
		"list": {
			call:   func(c *httpclient.Client) (any, error) { return c.ListUsers(context.Background()) },
			answer: jsonAnswer(200, `[{"username":"admin","grants":[{"action":"admin"}],"root":true},`+bobJSON+`]`), method: http.MethodGet, path: "/v1/users",
			want: []httpclient.User{{Username: "admin", Grants: []httpclient.Grant{{Action: "admin"}}, Root: true}, bob},
		},
		"list_empty": {
			call:   func(c *httpclient.Client) (any, error) { return c.ListUsers(context.Background()) },
			answer: jsonAnswer(200, `[]`), method: http.MethodGet, path: "/v1/users", want: []httpclient.User{},
		},
		"get": {
			call:   func(c *httpclient.Client) (any, error) { return c.User(context.Background(), "bob") },
			answer: jsonAnswer(200, bobJSON), method: http.MethodGet, path: "/v1/users/bob", want: &bob,
		},
		"delete": {
			call:   func(c *httpclient.Client) (any, error) { return nil, c.DeleteUser(context.Background(), "bob") },
			answer: canned{status: 204}, method: http.MethodDelete, path: "/v1/users/bob",
		},
		"set_grants": {
			call: func(c *httpclient.Client) (any, error) {
				return c.SetGrants(context.Background(), "bob", bob.Grants)
			},
			answer: jsonAnswer(200, bobJSON), method: http.MethodPut, path: "/v1/users/bob/grants",
			body: `{"grants":[{"action":"produce","patterns":["orders-*"]},{"action":"admin"}]}`, want: &bob,
		},
		"remove_every_grant": {
			call:   func(c *httpclient.Client) (any, error) { return c.SetGrants(context.Background(), "bob", nil) },
			answer: jsonAnswer(200, `{"username":"bob"}`), method: http.MethodPut, path: "/v1/users/bob/grants",
			body: `{"grants":[]}`, want: &httpclient.User{Username: "bob"},
		},
		"password_by_admin": {
			call: func(c *httpclient.Client) (any, error) {
				return nil, c.ChangePassword(context.Background(), "bob", httpclient.PasswordChange{New: "n3w"})
			},
			answer: canned{status: 204}, method: http.MethodPut, path: "/v1/users/bob/password", body: `{"new_password":"n3w"}`,
		},
		"password_self_service": {
			call: func(c *httpclient.Client) (any, error) {
				return nil, c.ChangePassword(context.Background(), "bob", httpclient.PasswordChange{New: "n3w", Current: "old"})
			},
			answer: canned{status: 204}, method: http.MethodPut, path: "/v1/users/bob/password", body: `{"new_password":"n3w","current_password":"old"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "admin", tc.answer)
			got, err := tc.call(c)
			if err != nil {
				t.Fatal(err)
			}
			r := rec.requests()[0]
			if r.Method != tc.method || r.Path != tc.path || string(r.Body) != tc.body {
				t.Fatalf("sent %s %s %s, want %s %s %s", r.Method, r.Path, r.Body, tc.method, tc.path, tc.body)
			}
			if !r.BasicOK || r.User != "admin" || r.Password != "pw" || r.Header.Get("X-Narad-Client") != "narad-cli/test" {
				t.Fatalf("credentials or client header missing: %+v", r)
			}
			if tc.body != "" && r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("content type %q", r.Header.Get("Content-Type"))
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// ensure that usernames are escaped as one path segment, and unusable ones are refused before any request.
func TestUsernamesArePathSegments(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(200, `{"username":"a/b c"}`))
	if _, err := c.User(context.Background(), "a/b c"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetGrants(context.Background(), "a/b c", nil); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if reqs[0].RawPath != "/v1/users/a%2Fb%20c" || reqs[1].RawPath != "/v1/users/a%2Fb%20c/grants" {
		t.Fatalf("raw paths %q %q", reqs[0].RawPath, reqs[1].RawPath)
	}
	for _, name := range []string{"", ".", ".."} {
		if err := c.DeleteUser(context.Background(), name); !errors.Is(err, httpclient.ErrBadUsername) {
			t.Fatalf("delete %q: %v", name, err)
		}
		if err := c.ChangePassword(context.Background(), name, httpclient.PasswordChange{New: "x"}); !errors.Is(err, httpclient.ErrBadUsername) {
			t.Fatalf("password %q: %v", name, err)
		}
	}
	if n := len(rec.requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

// ensure that refusals become APIErrors carrying the server's message, and a malformed answer is reported.
func TestUserErrors(t *testing.T) {
	t.Parallel()
	c, _ := newRecorder(t, "", jsonAnswer(409, `{"error":"already exists"}`), jsonAnswer(403, `{"error":"current password is incorrect"}`), jsonAnswer(200, `{"username":`))
	_, err := c.CreateUser(context.Background(), httpclient.NewUser{Username: "bob", Password: "topsecret"})
	if httpclient.StatusOf(err) != 409 || err.Error() != "http 409: already exists" {
		t.Fatalf("create: %v", err)
	}
	err = c.ChangePassword(context.Background(), "bob", httpclient.PasswordChange{New: "topsecret", Current: "wrongsecret"})
	if httpclient.StatusOf(err) != 403 || strings.Contains(err.Error(), "secret") {
		t.Fatalf("password: %v", err)
	}
	if _, err := c.User(context.Background(), "bob"); !errors.Is(err, httpclient.ErrMalformedReply) {
		t.Fatalf("malformed: %v", err)
	}
}
