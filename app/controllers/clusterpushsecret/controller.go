// Package clusterpushsecret reconciles ClusterPushSecrets: it keeps one
// PushSecret in every namespace the selectors match, creating, updating and
// deleting them as namespaces come, change labels and go.
package clusterpushsecret

import (
	"maps"
	"time"

	"go.uber.org/fx"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	"github.com/eso-dev/eso/apis/lenient"
	"github.com/eso-dev/eso/app/fanout"
)

// kind is how a ClusterPushSecret selects namespaces and records its
// PushSecrets. A spec eso cannot decode selects nothing.
var kind = fanout.Kind[*esv1alpha1.ClusterPushSecret, esv1alpha1.ClusterPushSecretStatus, *esv1alpha1.PushSecret]{
	Name:       "ClusterPushSecret",
	New:        func() *esv1alpha1.ClusterPushSecret { return &esv1alpha1.ClusterPushSecret{} },
	Status:     func(cps *esv1alpha1.ClusterPushSecret) *esv1alpha1.ClusterPushSecretStatus { return &cps.Status },
	Conditions: func(s *esv1alpha1.ClusterPushSecretStatus) *[]metav1.Condition { return &s.Conditions },
	Invalid:    func(cps *esv1alpha1.ClusterPushSecret) error { return lenient.Error(cps) },
	Selects: func(cps *esv1alpha1.ClusterPushSecret) ([]*metav1.LabelSelector, []string) {
		return cps.Spec.NamespaceSelectors, nil
	},
	Children: children,
	Record: func(s *esv1alpha1.ClusterPushSecretStatus, child string, spread fanout.Spread) {
		s.PushSecretName = child
		s.ProvisionedNamespaces = spread.Provisioned
		s.FailedNamespaces = nil
		for _, f := range spread.Failed {
			s.FailedNamespaces = append(s.FailedNamespaces, esv1alpha1.ClusterPushSecretNamespaceFailure{Namespace: f.Namespace, Reason: f.Reason})
		}
	},
	Interval: func(cps *esv1alpha1.ClusterPushSecret) time.Duration {
		return fanout.Interval(cps.Spec.RefreshInterval)
	},
	NewList: func() client.ObjectList { return &esv1alpha1.ClusterPushSecretList{} },
}

// children are the PushSecrets of a ClusterPushSecret: named
// spec.pushSecretName, or as the ClusterPushSecret. As upstream, they carry
// exactly the labels pushSecretMetadata gives them (no owner label): they
// are found by their controller reference.
func children(cps *esv1alpha1.ClusterPushSecret) fanout.Children[*esv1alpha1.PushSecret] {
	name := cps.Spec.PushSecretName
	if name == "" {
		name = cps.Name
	}
	return fanout.Children[*esv1alpha1.PushSecret]{
		Parent: cps, Kind: "PushSecret",
		Name: name, Taken: "push secret already exists in namespace", // upstream's reason
		New: func() *esv1alpha1.PushSecret { return &esv1alpha1.PushSecret{} },
		List: fanout.ListOf[*esv1alpha1.PushSecretList, esv1alpha1.PushSecret](
			func() *esv1alpha1.PushSecretList { return &esv1alpha1.PushSecretList{} },
			func(l *esv1alpha1.PushSecretList) []esv1alpha1.PushSecret { return l.Items }),
		Fill: func(ps *esv1alpha1.PushSecret) {
			ps.Spec = *cps.Spec.PushSecretSpec.DeepCopy()
			ps.Labels = maps.Clone(cps.Spec.PushSecretMetadata.Labels)
			ps.Annotations = maps.Clone(cps.Spec.PushSecretMetadata.Annotations)
		},
		Spec: func(ps *esv1alpha1.PushSecret) any { return ps.Spec },
	}
}

// Module runs the ClusterPushSecret controller.
var Module = fx.Module("clusterpushsecret-controller",
	fx.Invoke(kind.Run),
)
