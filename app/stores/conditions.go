package stores

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
)

// ValidateConditions checks that a ClusterSecretStore's conditions can be
// evaluated: selectors and regexes parse.
func ValidateConditions(conds []ssv2.ClusterSecretStoreCondition) error {
	for i, c := range conds {
		if c.NamespaceSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(c.NamespaceSelector); err != nil {
				return fmt.Errorf("conditions[%d].namespaceSelector: %w", i, err)
			}
		}
		for j, re := range c.NamespaceRegexes {
			if _, err := regexp.Compile(anchored(re)); err != nil {
				return fmt.Errorf("conditions[%d].namespaceRegexes[%d]: %w", i, j, err)
			}
		}
	}
	return nil
}

// AllowsNamespace reports whether a ClusterSecretStore's conditions let
// namespace use it: no conditions allow all; otherwise any matching condition
// does. Namespace labels come from reader (the manager's cache).
func AllowsNamespace(ctx context.Context, reader client.Reader, conds []ssv2.ClusterSecretStoreCondition, namespace string) (bool, error) {
	if len(conds) == 0 {
		return true, nil
	}
	var nsLabels labels.Set
	for _, c := range conds {
		if slices.Contains(c.Namespaces, namespace) {
			return true, nil
		}
		for _, expr := range c.NamespaceRegexes {
			re, err := regexp.Compile(anchored(expr))
			if err != nil {
				return false, fmt.Errorf("namespaceRegexes %q: %w", expr, err)
			}
			if re.MatchString(namespace) {
				return true, nil
			}
		}
		if c.NamespaceSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.NamespaceSelector)
		if err != nil {
			return false, fmt.Errorf("namespaceSelector: %w", err)
		}
		if nsLabels == nil {
			var ns corev1.Namespace
			if err := reader.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
				return false, fmt.Errorf("reading namespace %s: %w", namespace, err)
			}
			nsLabels = labels.Set(ns.Labels)
		}
		if sel.Matches(nsLabels) {
			return true, nil
		}
	}
	return false, nil
}

// anchored makes a regex match the whole name, as users expect of a
// namespace pattern like "team-.*".
func anchored(expr string) string { return "^(?:" + expr + ")$" }
