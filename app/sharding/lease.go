package sharding

import (
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// LabelRing marks a member Lease; its value names the ring (the leader
	// election ID), so two eso installs in one namespace keep apart.
	LabelRing = "sharding.external-secrets.io/ring"
	// AnnotationClaim is a member's claim: the member IDs, comma-separated
	// in Members order, whose ring it may be working under.
	AnnotationClaim = "sharding.external-secrets.io/claim"
)

// maxClaimMembers bounds how many member IDs a claim may name: a Lease
// naming more is read as claiming nothing it could not own anyway (its
// holder then owns nothing of the ring others compute), and is not a
// member. Far above any replica count eso runs with.
const maxClaimMembers = 256

// claimOf reads a member Lease's claim.
func claimOf(l *coordinationv1.Lease) []string {
	v := l.Annotations[AnnotationClaim]
	if v == "" {
		return nil
	}
	ids := strings.Split(v, ",")
	if len(ids) > maxClaimMembers {
		return nil
	}
	return Members(ids)
}

// observation is what a replica has seen of one member's Lease: its renew
// time as written, and when, on this replica's clock, that value was first
// seen. Expiry is judged on the local clock from that moment, as client-go's
// leader election does, so clocks that disagree cannot shorten a lease.
type observation struct {
	renewTime  time.Time
	observedAt time.Time
}

// forgetAfter is how long a replica remembers a member whose Lease is gone,
// for the handover metrics.
const forgetAfter = time.Hour

// liveness tracks the member Leases seen and decides which are live.
type liveness struct {
	seen map[string]observation
	// firstExpiry is when the first of the Leases live at the last observe
	// expires if not renewed meanwhile; zero if none was live.
	firstExpiry time.Time
}

// observe records leases as seen at now and returns the live ones: those
// whose renew time changed less than their duration ago. Leases seen for
// the first time count as just renewed.
func (lv *liveness) observe(leases []coordinationv1.Lease, now time.Time) (live []coordinationv1.Lease) {
	if lv.seen == nil {
		lv.seen = map[string]observation{}
	}
	listed := make(map[string]bool, len(leases))
	for _, l := range leases {
		listed[l.Name] = true
	}
	for id, o := range lv.seen {
		// A Lease still listed is never forgotten: seen again it would
		// count as just renewed.
		if !listed[id] && now.Sub(o.observedAt) > forgetAfter {
			delete(lv.seen, id)
		}
	}
	lv.firstExpiry = time.Time{}
	for _, l := range leases {
		var renew time.Time
		if l.Spec.RenewTime != nil {
			renew = l.Spec.RenewTime.Time
		}
		o, ok := lv.seen[l.Name]
		if !ok || !o.renewTime.Equal(renew) {
			o = observation{renewTime: renew, observedAt: now}
			lv.seen[l.Name] = o
		}
		expiry := o.observedAt.Add(durationOf(&l))
		if now.Before(expiry) {
			live = append(live, l)
			if lv.firstExpiry.IsZero() || expiry.Before(lv.firstExpiry) {
				lv.firstExpiry = expiry
			}
		}
	}
	return live
}

// lastRenewal is when this replica first saw member's latest renewal.
func (lv *liveness) lastRenewal(member string) (time.Time, bool) {
	o, ok := lv.seen[member]
	return o.observedAt, ok
}

func durationOf(l *coordinationv1.Lease) time.Duration {
	if l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds <= 0 {
		return 0
	}
	return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
}

// memberLease is the Lease of member id in ring, carrying claim and renewed
// at now.
func memberLease(namespace, ring, id string, claim []string, duration time.Duration, now time.Time) *coordinationv1.Lease {
	// Rounded up: a Lease must never say it lasts less than its holder
	// works without renewing it.
	secs := int32((duration + time.Second - 1) / time.Second)
	t := metav1.NewMicroTime(now)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: id, Namespace: namespace,
			Labels:      map[string]string{LabelRing: ring},
			Annotations: map[string]string{AnnotationClaim: strings.Join(claim, ",")},
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &secs, AcquireTime: &t, RenewTime: &t},
	}
}
