// Package clusterexternalsecret reconciles ClusterExternalSecrets: it keeps
// one ExternalSecret in every namespace the selectors match, creating,
// updating and deleting them as namespaces come, change labels and go.
package clusterexternalsecret

import (
	"maps"
	"slices"
	"time"

	"go.uber.org/fx"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/fanout"
)

// kind is how a ClusterExternalSecret selects namespaces and records its
// ExternalSecrets.
var kind = fanout.Kind[*esv1.ClusterExternalSecret, esv1.ClusterExternalSecretStatus, *esv1.ExternalSecret]{
	Name:       "ClusterExternalSecret",
	New:        func() *esv1.ClusterExternalSecret { return &esv1.ClusterExternalSecret{} },
	Status:     func(ces *esv1.ClusterExternalSecret) *esv1.ClusterExternalSecretStatus { return &ces.Status },
	Conditions: func(s *esv1.ClusterExternalSecretStatus) *[]metav1.Condition { return &s.Conditions },
	Selects: func(ces *esv1.ClusterExternalSecret) ([]*metav1.LabelSelector, []string) {
		selectors := slices.Clone(ces.Spec.NamespaceSelectors)
		if ces.Spec.NamespaceSelector != nil {
			selectors = append(selectors, ces.Spec.NamespaceSelector)
		}
		return selectors, ces.Spec.Namespaces
	},
	Children: children,
	Record: func(s *esv1.ClusterExternalSecretStatus, child string, spread fanout.Spread) {
		s.ExternalSecretName = child
		s.ProvisionedNamespaces = spread.Provisioned
		s.FailedNamespaces = nil
		for _, f := range spread.Failed {
			s.FailedNamespaces = append(s.FailedNamespaces, esv1.ClusterExternalSecretNamespaceFailure{Namespace: f.Namespace, Reason: f.Reason})
		}
	},
	Interval: func(ces *esv1.ClusterExternalSecret) time.Duration { return fanout.Interval(ces.Spec.RefreshInterval) },
	Passed:   []predicate.Predicate{forceSyncChanged},
	NewList:  func() client.ObjectList { return &esv1.ClusterExternalSecretList{} },
}

// children are the ExternalSecrets of a ClusterExternalSecret.
func children(ces *esv1.ClusterExternalSecret) fanout.Children[*esv1.ExternalSecret] {
	return fanout.Children[*esv1.ExternalSecret]{
		Parent: ces, Kind: "ExternalSecret",
		Name: ces.TargetExternalSecretName(), Label: esv1.LabelClusterExternalSecret,
		Taken: "external secret already exists in namespace", // upstream's reason
		New:   func() *esv1.ExternalSecret { return &esv1.ExternalSecret{} },
		List: fanout.ListOf[*esv1.ExternalSecretList, esv1.ExternalSecret](
			func() *esv1.ExternalSecretList { return &esv1.ExternalSecretList{} },
			func(l *esv1.ExternalSecretList) []esv1.ExternalSecret { return l.Items }),
		Fill: func(es *esv1.ExternalSecret) {
			es.Spec = *ces.Spec.ExternalSecretSpec.DeepCopy()
			es.Labels = maps.Clone(ces.Spec.ExternalSecretMetadata.Labels)
			es.Annotations = maps.Clone(ces.Spec.ExternalSecretMetadata.Annotations)
			// As upstream: force-sync on the ClusterExternalSecret resyncs
			// every ExternalSecret it stamps, and goes with it.
			if v, ok := ces.Annotations[esv1.AnnotationForceSync]; ok {
				if es.Annotations == nil {
					es.Annotations = map[string]string{}
				}
				es.Annotations[esv1.AnnotationForceSync] = v
			}
		},
		Spec: func(es *esv1.ExternalSecret) any { return es.Spec },
	}
}

// forceSyncChanged passes a change of a ClusterExternalSecret's force-sync
// annotation, the only annotation it passes on.
var forceSyncChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[esv1.AnnotationForceSync] != e.ObjectNew.GetAnnotations()[esv1.AnnotationForceSync]
	},
}

// Module runs the ClusterExternalSecret controller.
var Module = fx.Module("clusterexternalsecret-controller",
	fx.Invoke(kind.Run),
)
