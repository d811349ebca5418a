package sharding

import "strings"

// Assignment is what one replica may work, decided from a read of every
// Lease made after the replica's own claim was written.
//
// Why two replicas never work one key: say A and B both work k. A works k
// only after writing a claim giving k to A and then reading B's claim not
// giving k to B; B likewise. A's read did not see B's claim, so it came
// before B's write, which came before B's read; B's read then came after
// A's write and saw A's claim, so B does not work k. Claims only change
// after the work they no longer cover has stopped, so "a replica works k"
// implies "its latest claim gives it k" at every instant.
type Assignment struct {
	// Self is this replica's member ID; empty: the replica works nothing.
	Self string
	// Claim is the member list this replica's Lease publishes (Members order).
	Claim []string
	// Others are the claims of the other live members, by member ID.
	Others map[string][]string
	// Next, when set, is a member list the replica is moving to: it works
	// only keys that list gives it too, while it releases the others
	// before publishing Next as its claim. Should that write fail, the
	// assignment stays this restricted one until the next step: safe, as
	// it works less than its published claim allows.
	Next []string
	// Cached, when not nil, are the namespaces whose objects the replica
	// caches (NamespaceCache): it works no other namespace. Cluster-scoped
	// keys are not cached per namespace and do not need it.
	Cached map[string]bool
}

// Works reports whether the replica may work key: its own claim gives it
// the key and no other live member's claim gives that member the key.
func (a *Assignment) Works(key string) bool {
	if a == nil || a.Self == "" || Owner(a.Claim, key) != a.Self {
		return false
	}
	if a.Next != nil && Owner(a.Next, key) != a.Self {
		return false
	}
	if a.Cached != nil && !strings.HasPrefix(key, "/") && !a.Cached[key] {
		return false
	}
	return !a.claimedByAnother(key)
}

// Blocked reports whether key is this replica's under its claim but
// another live member still claims it: the handover is waiting for that
// member's release (or for its Lease to expire).
func (a *Assignment) Blocked(key string) bool {
	if a == nil || a.Self == "" || Owner(a.Claim, key) != a.Self {
		return false
	}
	return a.claimedByAnother(key)
}

func (a *Assignment) claimedByAnother(key string) bool {
	for id, claim := range a.Others {
		if Owner(claim, key) == id {
			return true
		}
	}
	return false
}

// moving is a copy of a that works only what next gives it too (Next).
func (a *Assignment) moving(next []string) *Assignment {
	b := *a
	b.Next = next
	return &b
}
