package remotes

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ErrInvalidConfig reports a Service built with a missing dependency.
var ErrInvalidConfig = errors.New("remotes: invalid configuration")

// Options are the node's settings the use cases read.
type Options struct {
	// Self is this node's member id.
	Self string
	// APIHopEncrypted is remotes.api_hop_encrypted: the node attests that
	// the hop from the client to it is encrypted, so it may take passwords.
	APIHopEncrypted bool
	// RaftTLS reports whether Raft runs over TLS (a posture fact reported
	// by the checks, not required).
	RaftTLS bool
	// LegacyClusterAuth is security.allow_legacy_cluster_auth: while on,
	// the posture gate refuses remote writes (internals.md §7.8).
	LegacyClusterAuth bool
}

// Deps are the ports the use cases drive; every one is required.
type Deps struct {
	Store     ports.MetadataStore
	Keyring   ports.RemoteKeyring
	Transport ports.RemoteTransport
	Clock     ports.Clock
	Audit     ports.AuditLog
	// Random supplies ids and the cluster salt (crypto/rand in production).
	Random io.Reader
	// Bounds, PeerStats and Frontiers resolve a remote child's start
	// offsets; Stuck says where a cursor is blocked. nil ones make the
	// remote-child writes that need them answer 503.
	Bounds    Bounds
	PeerStats ports.PeerStats
	Frontiers Frontiers
	Stuck     Stuck
	// Links reads the remote child cursors owners run (the children
	// listing); nil reports every partition unknown.
	Links LinkReader
	// Backlogs reads the members' dispatch backlogs (the unshipped
	// check); nil counts this node as not answering.
	Backlogs Backlogs
	// Members asks other members to run the target checks and for their
	// credential states and posture; nil checks from this node alone and
	// counts every other member as not answering the posture gate.
	Members MemberPeers
	// Servers reads the Raft configuration for the release gate; nil
	// counts the member records alone.
	Servers Servers
	// Writer hands remote writes to the metadata leader (op 35); nil
	// proposes them from this node.
	Writer ports.PeerRemoteWriter
	// Sealed and ResealOpened count a sealed password and one opened to
	// re-seal it (narad_remote_seals_total, _reseal_opens_total); nil
	// counts nothing.
	Sealed, ResealOpened func()
}

// Service runs the remotes use cases of one node. Safe for concurrent use.
type Service struct {
	o      Options
	d      Deps
	writes *window  // remote writes taken by this node (api.md §2.18)
	childW *window  // remote-child writes taken by this node (internals.md §7.1)
	checks *spacing // target checks per remote on this node (internals.md §7.1)
	// unshippedChecks spaces the unshipped checks of a parent (§7.9).
	unshippedChecks *spacing
	cache           *Cache
}

// New returns a Service whose credential cache is cache.
func New(o Options, d Deps, cache *Cache) (*Service, error) {
	if d.Store == nil || d.Keyring == nil || d.Transport == nil || d.Clock == nil || d.Audit == nil || d.Random == nil || cache == nil {
		return nil, fmt.Errorf("nil dependency: %w", ErrInvalidConfig)
	}
	return &Service{o: o, d: d, writes: newWindow(writesPerWindowMax, writesWindow), childW: newWindow(childWritesPerWindowMax, writesWindow),
		checks: newSpacing(checkSpacing), unshippedChecks: newSpacing(unshippedSpacing), cache: cache}, nil
}

// authorize applies the remotes' access rule: admin, security on.
func authorize(p access.Principal) error {
	return access.Decide(p, access.Request{Op: access.OpRemote})
}

// admitWrite charges one remote write to this node's minute.
func (s *Service) admitWrite() error {
	if ok, after := s.writes.admit(s.d.Clock.Now()); !ok {
		return domain.RefuseLater(domain.ErrRateLimited, msgWrites, after)
	}
	return nil
}

// readRemote reads name from the local replica: a 400 for a name no remote
// can have, domain.ErrRemoteNotFound when absent.
func (s *Service) readRemote(name string) (meta.Remote, error) {
	if meta.ValidRemoteName(name) != nil {
		return meta.Remote{}, invalidField("%q is not a remote name", name)
	}
	all, err := s.d.Store.Remotes()
	if err != nil {
		return meta.Remote{}, readFailure(err)
	}
	for _, r := range all {
		if r.Name == name {
			return r, nil
		}
	}
	return meta.Remote{}, domain.ErrRemoteNotFound
}

// newID draws a remote id: 16 lowercase hex characters.
func (s *Service) newID() (string, error) {
	var b [idBytes]byte
	if _, err := io.ReadFull(s.d.Random, b[:]); err != nil {
		return "", fmt.Errorf("remotes: draw an id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// salt returns the cluster's salt and whether this write must carry it
// (the first remote mints it).
func (s *Service) salt() (salt []byte, mint bool, err error) {
	salt, found, err := s.d.Store.RemoteSalt()
	if err != nil {
		return nil, false, readFailure(err)
	}
	if found {
		return salt, false, nil
	}
	salt = make([]byte, saltBytes)
	if _, err := io.ReadFull(s.d.Random, salt); err != nil {
		return nil, false, fmt.Errorf("remotes: draw the cluster salt: %w", err)
	}
	return salt, true, nil
}

// refusal maps an apply refusal to the client's error.
func refusal(res meta.Result) error {
	switch res.Code {
	case meta.CodeNotFound:
		return domain.Refuse(domain.ErrRemoteNotFound, "remote not found")
	case meta.CodeExists, meta.CodeConflict:
		return domain.Refuse(domain.ErrConflict, res.Detail)
	case meta.CodeRefused:
		return domain.Refuse(domain.ErrConflict, res.Detail)
	case meta.CodeInvalid:
		return domain.Refuse(domain.ErrInvalidArgument, res.Detail)
	}
	return fmt.Errorf("remotes: unexpected apply result: %w", res.Err())
}

// readFailure maps a local metadata read error: a stopped or lagging replica
// is transient (503), anything else is internal.
func readFailure(err error) error {
	if errors.Is(err, meta.ErrStopped) || errors.Is(err, meta.ErrNotCaughtUp) || errors.Is(err, meta.ErrUnavailable) {
		return domain.Refuse(domain.ErrUnavailable, "metadata unavailable on this node: "+err.Error())
	}
	return fmt.Errorf("remotes: read metadata: %w", err)
}

// proposeFailure maps a Propose error: an invalid event or a type an older
// member holds back never applies (412 for the latter); anything else may
// still apply (503).
func proposeFailure(err error) error {
	switch {
	case errors.Is(err, meta.ErrTypeHeldBack):
		return domain.Refuse(domain.ErrPrecondition, "a member does not apply the remote entry types yet: "+err.Error())
	case errors.Is(err, meta.ErrInvalidEvent):
		return domain.Refuse(domain.ErrInvalidArgument, err.Error())
	}
	return domain.Refuse(domain.ErrUnavailable,
		"control plane temporarily unavailable: the change may still be applied, read it back before retrying")
}

// record writes the audit line of one request by p on remote name. It
// names the remote only: never its URL, username or password.
func (s *Service) record(ctx context.Context, p access.Principal, name string, err error) {
	subject := "remotes"
	if name != "" {
		subject = "remote " + name
	}
	s.recordSubject(ctx, p, subject, err)
}

// recordChild writes the audit line of one request on a remote child.
func (s *Service) recordChild(ctx context.Context, p access.Principal, parent, child string, err error) {
	s.recordSubject(ctx, p, "remote child "+parent+"/"+child, err)
}

// recordSubject writes the receiving node's line of the request ctx
// carries (Service.begin).
func (s *Service) recordSubject(ctx context.Context, p access.Principal, subject string, err error) {
	req := requestOf(ctx)
	outcome, reason := ports.AuditOK, ""
	switch {
	case err == nil:
	case refused(err):
		outcome, reason = ports.AuditRefused, err.Error()
	default:
		outcome, reason = ports.AuditFailed, err.Error()
	}
	s.d.Audit.Record(ports.AuditEvent{Event: req.event, Actor: p.Name, Subject: subject, Outcome: outcome, Reason: reason, RequestID: req.id})
}

// refused reports whether err is the client's refusal (an answer the
// request earned), not a failure of this node or the cluster.
func refused(err error) bool {
	if errors.Is(err, domain.ErrUnavailable) {
		return false
	}
	var r *domain.Refusal
	var inUse *InUseError
	var check *CheckError
	var skip *SkipError
	var unshipped *UnshippedError
	var gate *GateError
	return errors.As(err, &r) || errors.As(err, &inUse) || errors.As(err, &check) || errors.As(err, &skip) ||
		errors.As(err, &unshipped) || errors.As(err, &gate) || errors.Is(err, domain.ErrForbidden)
}

func msToTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// seal seals password for b and counts it.
func (s *Service) seal(salt []byte, b ports.RemoteBinding, password []byte) (meta.RemoteCredential, error) {
	cred, err := s.d.Keyring.Seal(salt, b, password)
	if err == nil && s.d.Sealed != nil {
		s.d.Sealed()
	}
	return cred, err
}
