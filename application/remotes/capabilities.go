package remotes

import (
	"context"
	"net/http"
	"net/url"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/remote"
	"github.com/narad/narad/ports"
)

// Capabilities is what a dry-run attach tells of the target (api.md
// §2.10.2 `capabilities`): the messages one batch produce request may
// carry (1000, or 100 for an older target) and whether the target decodes
// a zstd-compressed body.
type Capabilities struct {
	MaxMessages int
	Zstd        bool
}

// dryRunCapabilities probes the target of a dry-run attach from this node
// once its checks passed (reports are the members' reports). It is nil
// unless req is a dry run, an allowlist is set and this node's own check
// passed (api.md §2.10.2 answers capabilities only when the leader could
// probe and an allowlist is set), and the probe below answered.
//
// The probe is the capability probe of internals.md §7.2 "Chunks" sent
// zstd-compressed: every target refuses it without storing. A target that
// decodes zstd reads the messages and answers as to the plain probe, which
// also gives its message cap. One that does not answers 415 or "invalid
// json" (what makes a link resend uncompressed, internals.md §7.2
// "Compression"): zstd is false and the cap is what this node's check
// learned. Any other answer leaves the capabilities unknown (nil). The
// probe runs whatever the remote's compression setting, so an admin learns
// whether zstd would work before turning it on.
func (s *Service) dryRunCapabilities(ctx context.Context, req AttachRequest, r meta.Remote, reports []Report) *Capabilities {
	if !req.DryRun || !s.d.Transport.AllowlistSet() {
		return nil
	}
	own := -1
	for i, rep := range reports {
		if rep.Node == s.o.Self {
			own = i
			break
		}
	}
	if own < 0 || reports[own].Result != ResultPass {
		return nil
	}
	client, _ := s.cache.Client(r)
	if client == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, memberCheckTimeout)
	defer cancel()
	topic := req.RemoteTopic
	if topic == "" {
		topic = req.Parent
	}
	a, err := client.Do(ctx, ports.RemoteRequest{Method: http.MethodPost, Path: "/v1/topics/" + url.PathEscape(topic) + "/produce/batch",
		Body: remote.AppendProbe(nil), Compress: true})
	if err != nil || !a.Compressed {
		return nil // no answer, or the transport found nothing to gain by compressing
	}
	answer := remote.Answer{Status: a.Status, Body: a.Body, RetryAfter: a.RetryAfter}
	if n, ok := remote.ProbeCapacity(answer); ok {
		return &Capabilities{MaxMessages: n, Zstd: true}
	}
	if remote.Classify(answer, true).Action != remote.ResendUncompressed {
		return nil
	}
	out := &Capabilities{MaxMessages: remote.ChunkMaxMessagesLegacy}
	if reports[own].Capable1000 {
		out.MaxMessages = remote.ChunkMaxMessagesCapable
	}
	return out
}
