package remotes

import (
	"context"
	"slices"
	"strings"

	"github.com/narad/narad/domain/meta"
)

// Lingering is a deleted remote that some member still holds (api.md
// §2.18 `lingering`): an entry of its credential cache, or a remote its
// metadata replica still lists because it has not applied the delete yet.
type Lingering struct {
	Name  string
	Nodes []string // the members holding it, sorted
}

// lingering finds the remotes not in all (this node's copy) that this
// node's credential cache still holds and, with ask, that another member
// reports over op 36 (its credential states); silent names the members
// that did not answer, in member order. A member's report is matched by
// name, so a remote deleted and created again under its name does not
// linger on another member (this node's cache tells the incarnations
// apart).
func (s *Service) lingering(ctx context.Context, all []meta.Remote, ask bool) (out []Lingering, silent []string) {
	known := make(map[string]bool, len(all))
	for _, r := range all {
		known[r.Name] = true
	}
	holders := map[string][]string{}
	for _, c := range s.cache.Held(all) {
		holders[c.Remote] = append(holders[c.Remote], s.o.Self)
	}
	if ask {
		var reports map[string][]string
		reports, silent = s.memberRemotes(ctx)
		for node, names := range reports {
			for _, name := range names {
				if !known[name] && !slices.Contains(holders[name], node) {
					holders[name] = append(holders[name], node)
				}
			}
		}
	}
	for name, nodes := range holders {
		slices.Sort(nodes)
		out = append(out, Lingering{Name: name, Nodes: nodes})
	}
	slices.SortFunc(out, func(a, b Lingering) int { return strings.Compare(a.Name, b.Name) })
	return out, silent
}

// memberRemotes asks every other member which remotes it reports a
// credential state of: by member, the remotes' names; silent names the
// members that did not answer (all of them when this node cannot ask),
// in member order.
func (s *Service) memberRemotes(ctx context.Context) (reports map[string][]string, silent []string) {
	members, err := s.d.Store.Members()
	if err != nil {
		return nil, nil
	}
	got := s.memberCredentials(ctx, members)
	reports = make(map[string][]string, len(got))
	for node, creds := range got {
		names := make([]string, 0, len(creds))
		for _, c := range creds {
			names = append(names, c.Remote)
		}
		reports[node] = names
	}
	for _, m := range members {
		if _, ok := reports[m.ID]; !ok && m.ID != s.o.Self {
			silent = append(silent, m.ID)
		}
	}
	return reports, silent
}
