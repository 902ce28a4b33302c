package rebalance

import (
	"cmp"
	"slices"

	"github.com/narad/narad/domain/meta"
)

// State is what the planner reads from the leader's replica.
type State struct {
	Members     []meta.Member
	Topics      []meta.Topic
	Assignments []meta.Assignment
	// MaxInFlight bounds the moves in flight in the cluster, those already
	// targeted included (MaxInFlightMovesDefault; 0 or less plans nothing).
	MaxInFlight int
}

// slot names one partition.
type slot struct {
	topic     string
	partition int32
}

// planner is one planning pass over a State.
type planner struct {
	receivers []string        // alive and not draining, sorted by id
	alive     map[string]bool // alive members, draining or not
	load      map[string]int  // settled partitions at alive owners + in-flight at destinations
	share     map[string]int  // each alive member's fair share (0 when draining)
	where     map[slot]string // where each placed partition lives once its move lands
	movable   map[string][]meta.Assignment
	partners  map[slot][]slot // anti-affine partitions (fan-out child p ~ parent p)
	ids       map[string]string
	inFlight  int
}

// Plan returns the moves to start now (internals.md §11.2), in the order
// they were chosen. A node's partitions are moved only beyond its share:
// with T partitions counted over R receivers each receiver's share is
// floor(T/R) or ceil(T/R), the ceil slots going to those already holding
// the most; a draining node's share is 0. Each move leaves the node with
// the largest remaining surplus for the receiver with the largest
// remaining deficit; a partition co-located with its anti-affine partner
// leaves first, and a destination not holding the partner wins a tie.
// Moves already in flight count against MaxInFlight.
func Plan(s State) []meta.Move {
	p := newPlanner(s)
	budget := s.MaxInFlight - p.inFlight
	if budget <= 0 || len(p.receivers) == 0 {
		return nil
	}
	p.shares()
	var out []meta.Move
	for len(out) < budget {
		mv, ok := p.next()
		if !ok {
			break
		}
		out = append(out, mv)
	}
	return out
}

func newPlanner(s State) *planner {
	p := &planner{
		alive: map[string]bool{}, load: map[string]int{}, share: map[string]int{},
		where: map[slot]string{}, movable: map[string][]meta.Assignment{},
		partners: map[slot][]slot{}, ids: map[string]string{},
	}
	for _, m := range s.Members {
		if m.Status != meta.StatusAlive {
			continue
		}
		p.alive[m.ID] = true
		if !m.Draining {
			p.receivers = append(p.receivers, m.ID)
		}
	}
	slices.Sort(p.receivers)
	topics := map[string]meta.Topic{}
	for _, t := range s.Topics {
		topics[t.Name] = t
		p.ids[t.Name] = t.ID
	}
	rows := slices.Clone(s.Assignments)
	slices.SortFunc(rows, byPartition)
	for _, r := range rows {
		t, ok := topics[r.Topic]
		if !ok || r.Owner == "" || r.Partition >= t.Partitions || !r.BelongsTo(t.ID) {
			continue
		}
		p.count(r)
	}
	p.pair(topics)
	return p
}

// count adds one row to the loads.
func (p *planner) count(r meta.Assignment) {
	k := slot{r.Topic, r.Partition}
	switch {
	case r.Target != "":
		p.inFlight++
		p.where[k] = r.Target
		if p.alive[r.Target] {
			p.load[r.Target]++
		}
	case p.alive[r.Owner]:
		p.where[k] = r.Owner
		p.load[r.Owner]++
		p.movable[r.Owner] = append(p.movable[r.Owner], r)
	default:
		p.where[k] = r.Owner // a dead owner's partition: neither counted nor moved
	}
}

// pair links each fan-out child's partition p with its parent's partition p.
func (p *planner) pair(topics map[string]meta.Topic) {
	for _, t := range topics {
		parent, ok := topics[t.Parent]
		if t.Parent == "" || !ok {
			continue
		}
		for i := range min(t.Partitions, parent.Partitions) {
			c, pa := slot{t.Name, i}, slot{parent.Name, i}
			p.partners[c] = append(p.partners[c], pa)
			p.partners[pa] = append(p.partners[pa], c)
		}
	}
}

// shares gives each receiver floor(T/R) or ceil(T/R), the ceil slots to
// the receivers already holding the most (then by id).
func (p *planner) shares() {
	total := 0
	for id := range p.alive {
		total += p.load[id]
	}
	order := slices.Clone(p.receivers)
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(p.load[b], p.load[a]) })
	base, extra := total/len(order), total%len(order)
	for i, id := range order {
		p.share[id] = base
		if i < extra {
			p.share[id]++
		}
	}
}

// next plans one move, or reports that none is left to make.
func (p *planner) next() (meta.Move, bool) {
	from, ok := p.source()
	if !ok {
		return meta.Move{}, false
	}
	r := p.take(from)
	to, ok := p.destination(slot{r.Topic, r.Partition})
	if !ok {
		return meta.Move{}, false
	}
	k := slot{r.Topic, r.Partition}
	p.where[k] = to
	p.load[from]--
	p.load[to]++
	id := r.TopicID
	if id == "" {
		id = p.ids[r.Topic]
	}
	return meta.Move{Topic: r.Topic, TopicID: id, Partition: r.Partition, From: from, To: to}, true
}

// source is the alive node with the largest surplus that still has a
// settled partition to give (ties by id).
func (p *planner) source() (string, bool) {
	best, bestSurplus := "", 0
	for _, id := range sortedKeys(p.movable) {
		if s := p.load[id] - p.share[id]; s > bestSurplus && len(p.movable[id]) > 0 {
			best, bestSurplus = id, s
		}
	}
	return best, best != ""
}

// take removes and returns the partition from leaves next: the first one
// sharing its node with an anti-affine partner, else the first in order.
func (p *planner) take(from string) meta.Assignment {
	rows := p.movable[from]
	i := slices.IndexFunc(rows, func(r meta.Assignment) bool { return p.colocated(slot{r.Topic, r.Partition}, from) })
	if i < 0 {
		i = 0
	}
	r := rows[i]
	p.movable[from] = slices.Delete(rows, i, i+1)
	return r
}

// destination is the receiver with the largest deficit, a node not holding
// an anti-affine partner of k winning a tie (then by id).
func (p *planner) destination(k slot) (string, bool) {
	best, bestDeficit, bestApart := "", 0, false
	for _, id := range p.receivers {
		d := p.share[id] - p.load[id]
		if d <= 0 {
			continue
		}
		apart := !p.colocated(k, id)
		if d > bestDeficit || (d == bestDeficit && apart && !bestApart) {
			best, bestDeficit, bestApart = id, d, apart
		}
	}
	return best, best != ""
}

// colocated reports whether node holds an anti-affine partner of k.
func (p *planner) colocated(k slot, node string) bool {
	for _, o := range p.partners[k] {
		if p.where[o] == node {
			return true
		}
	}
	return false
}

func byPartition(a, b meta.Assignment) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
