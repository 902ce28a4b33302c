package httpapi

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"

	"github.com/gin-gonic/gin"
)

// clientHeader is the header that marks a request as sent by a Narad client.
const clientHeader = "X-Narad-Client"

// msg415 is the 415 rule's error message (api.md §0.2, conformance 151).
const msg415 = "state-changing requests must send Content-Type: application/json or application/octet-stream, or an X-Narad-Client header"

// stateChanging reports whether method must pass the 415 rule.
func stateChanging(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// passes415 reports whether r satisfies the cross-site guard: an accepted
// content type (parameters allowed) or a non-empty X-Narad-Client header.
func passes415(r *http.Request) bool {
	if !stateChanging(r.Method) || r.Header.Get(clientHeader) != "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && (mt == "application/json" || mt == "application/octet-stream")
}

// guard415 refuses state-changing requests that fail the 415 rule, before
// routing decides anything else (so before 405 too).
func guard415(c *gin.Context) {
	if !passes415(c.Request) {
		writeError(c, http.StatusUnsupportedMediaType, msg415)
		c.Abort()
		return
	}
	c.Next()
}

// writeError sends the error body {"error":"<msg>"}\n with an exact length.
func writeError(c *gin.Context, status int, msg string) {
	if status == http.StatusForbidden {
		c.Set(deniedKey, msg) // for the audit line of the denial
	}
	body := appendErrorBody(nil, msg)
	c.Data(status, "application/json", body)
}

// appendErrorBody appends {"error":"<msg>"}\n without HTML escaping, so a
// message such as "must be >= 0" reads as the spec writes it.
func appendErrorBody(dst []byte, msg string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(msg) // a string always encodes; Encode adds the newline
	dst = append(dst, `{"error":`...)
	dst = append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
	return append(dst, "}\n"...)
}
