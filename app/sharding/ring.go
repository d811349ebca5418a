// Package sharding splits eso's work between active replicas (--shards
// auto). Kubernetes itself is the coordinator: each replica holds a Lease of
// its own in eso's namespace, the live Leases are the members, and a
// deterministic ring over the members decides which replica works which
// namespace (and, by name, which cluster-scoped object).
//
// A namespace is never worked by two replicas at once. Each Lease carries
// its holder's claim: the member list whose ring the holder may be working
// under. A replica releases what a new member list takes from it, waits for
// its reconciles of those namespaces to finish and only then publishes the
// new claim; it starts a namespace only after a read of every Lease, made
// after its own claim was written, shows no other live member claiming it.
// Both reads are linearizable (the API server reads etcd), so of two
// replicas claiming one namespace at least one sees the other's claim (see
// Assignment). A replica that cannot renew its Lease stops all work before
// the others may judge it gone.
package sharding

import (
	"hash/fnv"
	"slices"
)

// Key is the ring key of a reconcile request: the namespace of a namespaced
// object; "/" and the name of a cluster-scoped one (no namespace contains
// "/", so the two never meet).
func Key(namespace, name string) string {
	if namespace != "" {
		return namespace
	}
	return "/" + name
}

// Owner is the member that owns key among members: the one whose hash with
// the key is highest (rendezvous hashing, a consistent hash). A member
// joining takes only the keys it now wins, a member leaving gives up only
// its own, and each of n members owns about 1/n of the keys. Empty when
// there are no members.
func Owner(members []string, key string) string {
	var owner string
	var best uint64
	for _, m := range members {
		if s := score(m, key); owner == "" || s > best || (s == best && m < owner) {
			owner, best = m, s
		}
	}
	return owner
}

// score mixes member and key: FNV-1a, then the splitmix64 finalizer so that
// keys differing in one character spread over the whole range.
func score(member, key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(key))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Members is a member list in the one order claims are written and compared in.
func Members(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}
