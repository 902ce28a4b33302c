package httpclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Scrape GETs metricsURL, an absolute http(s) URL such as a node's
// /metrics (api.md §2.3) or a metrics listener's, with the client's
// headers and credentials, and returns the answer's body (the Prometheus
// text exposition). The request goes to metricsURL itself, not to one of
// the client's servers. A status >= 400 is an *APIError.
func (c *Client) Scrape(ctx context.Context, metricsURL string) ([]byte, error) {
	u, err := url.Parse(metricsURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q: want an http(s) URL", ErrBadServer, metricsURL)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Narad-Client", c.name)
	req.Header.Set("User-Agent", c.name)
	req.Header.Set("Accept", "text/plain")
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, readAPIError(resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBody+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read answer: %w", u.Redacted(), err)
	}
	if len(b) > maxReplyBody {
		return nil, fmt.Errorf("GET %s: answer over %d bytes: %w", u.Redacted(), maxReplyBody, ErrMalformedReply)
	}
	return b, nil
}
