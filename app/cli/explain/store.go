package explain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// storeName names a store with its apiVersion.
func storeName(s *stores.Store) string {
	if s.Namespace == "" {
		return fmt.Sprintf("%s %s (%s)", s.Kind, s.Name, s.APIVersion)
	}
	return fmt.Sprintf("%s %s/%s (%s)", s.Kind, s.Namespace, s.Name, s.APIVersion)
}

// refName names what a storeRef of an object in namespace points at, before
// it is resolved.
func refName(ref esv1.SecretStoreRef, namespace string) string {
	kind := ref.Kind
	if kind == "" {
		kind = stores.KindSecretStore
	}
	name := namespace + "/" + ref.Name
	if kind == stores.KindClusterSecretStore {
		name = ref.Name
	}
	apiVersion := ref.APIVersion
	if apiVersion == "" {
		apiVersion = "no apiVersion"
	}
	return fmt.Sprintf("%s %s (%s)", kind, name, apiVersion)
}

// resolution says how a storeRef was resolved: which store a reference
// without apiVersion picked, by the resolver's rule.
func resolution(field string, ref esv1.SecretStoreRef, s *stores.Store) string {
	if ref.APIVersion != "" {
		return field + " names it with apiVersion " + ref.APIVersion
	}
	line := field + " has no apiVersion: the " + stores.StoreAPIVersionV1 + " store of the name is used when one exists, else the " +
		esv1.StoreAPIVersionV2Alpha1 + " one"
	if s != nil {
		line += "; it resolves to the " + s.APIVersion + " store"
		if s.Shadows {
			line += " (a " + esv1.StoreAPIVersionV2Alpha1 + " store of the same name exists and is NOT used)"
		}
	}
	return line
}

// resolveRef resolves ref of an object in namespace as eso does and adds
// the store's chain; it returns the store, nil when it was not found.
func (s *session) resolveRef(ctx context.Context, r *Report, field string, ref esv1.SecretStoreRef, namespace string, depth int) *stores.Store {
	st, err := s.resolver.Get(ctx, namespace, ref)
	if err != nil {
		l := Link{Depth: depth, What: refName(ref, namespace), State: Failing, Details: []string{resolution(field, ref, nil)}}
		switch {
		case errors.Is(err, stores.ErrStoreNotFound):
			l.Status = "not found: " + err.Error()
		case apierrors.IsForbidden(err):
			l.State, l.Status = Unknown, "cannot read it with your kubeconfig: "+err.Error()
		default:
			l.Status = err.Error()
		}
		if l.State == Failing {
			l.Hint = hint(externalSecretHints, outcomes.Of(err).ExternalSecretReason)
		}
		r.add(l)
		return nil
	}
	s.storeChain(ctx, r, st, depth, namespace, resolution(field, ref, st))
	return st
}

// storeChain adds the links of store st as seen by an object of namespace
// requester (empty when the store itself is explained): the store, its
// provider configuration and the credentials Secrets it names.
func (s *session) storeChain(ctx context.Context, r *Report, st *stores.Store, depth int, requester string, details ...string) {
	l := Link{Depth: depth, What: storeName(st), State: conditionState(st.Status.Conditions, ssv2.ConditionReady),
		Status: conditionLine(st.Status.Conditions, ssv2.ConditionReady, st.Generation), Details: details}
	reason := conditionReason(st.Status.Conditions, ssv2.ConditionReady)
	if l.State != OK {
		l.Hint = hint(storeHints, reason)
	}
	if !s.resolver.OwnsClass(st) {
		l.State = Failing
		l.Details = append(l.Details, fmt.Sprintf("spec.controller is %q: only an eso started with --controller-class=%q acts on it (pass --controller-class to explain as that eso)",
			st.Spec.Controller, st.Spec.Controller))
		l.Hint = "set spec.controller to the class of the eso that should serve it"
	}
	if st.Spec.GatingPolicy == ssv2.GatingDisabled {
		l.Details = append(l.Details, "gatingPolicy Disabled: objects sync through it even while it is not Ready")
	}
	for _, n := range st.Notes {
		l.Details = append(l.Details, "without effect in eso: "+n)
	}
	if requester != "" && s.resolver.OwnsClass(st) {
		// Gating shows in the Ready condition above; the namespace
		// conditions may need the namespace's labels, which the user may
		// not read.
		switch err := s.resolver.CheckUsable(ctx, st, requester); {
		case err == nil || errors.Is(err, stores.ErrStoreNotReady):
		case apierrors.IsForbidden(err):
			l.Details = append(l.Details, "cannot tell whether namespace "+requester+" may use it: "+shortError(err))
		default:
			l.State = Failing
			l.Details = append(l.Details, "refused to namespace "+requester+": "+err.Error())
			l.Hint = hint(externalSecretHints, outcomes.Of(err).ExternalSecretReason)
		}
	}
	r.add(l)
	s.configChain(ctx, r, st, depth+1, requester)
}

// configChain adds the provider configuration link of st and its
// credentials Secrets.
func (s *session) configChain(ctx context.Context, r *Report, st *stores.Store, depth int, requester string) {
	if st.Untranslatable != nil {
		r.add(Link{Depth: depth, What: "provider configuration (inline in the v1 store's spec.provider)", State: Failing,
			Status: st.Untranslatable.Error(), Hint: "change spec.provider to what eso serves, or migrate the store (`eso migrate`)"})
		return
	}
	ref, err := st.ProviderRef()
	if err != nil {
		r.add(Link{Depth: depth, What: "provider configuration " + ref.Kind + " " + ref.Namespace + "/" + ref.Name, State: Failing,
			Status: err.Error(), Hint: hint(storeHints, outcomes.Of(err).ForStore().StoreReason)})
		return
	}
	var details []string
	if addr := st.Spec.ProviderConfig.Address; addr != "" {
		details = append(details, "served by the provider process at "+addr+" (which reads the configuration and credentials with its own rights)")
	}
	var cfg client.Object
	l := Link{Depth: depth, What: configName(ref), Details: details}
	switch obj, known := s.resolver.Plugins().Index().NewConfig(plugin.RoleProvider, ref.Kind); {
	case st.Inline != nil:
		cfg = st.Inline
		l.What, l.State, l.Status = ref.Kind+" (inline in the v1 store's spec.provider)", OK, "translated from the store's spec"
	case !known && st.Spec.ProviderConfig.Address == "":
		// This command's build, which may differ from the cluster's eso:
		// the store's Ready condition says whether that one has the kind.
		l.State, l.Status = Unknown, "this eso command is built without provider kind "+ref.Kind+", so it cannot read the configuration"
		if near := plugin.Closest(ref.Kind, s.resolver.Plugins().Index().Kinds(plugin.RoleProvider)); near != "" {
			l.Status += " (did you mean " + near + "?)"
		}
	case !known:
		l.State, l.Status = Unknown, "kind not compiled into this eso command: only the provider process reads it"
	default:
		err := plugin.ReadConfig(ctx, s.client, ref, obj)
		switch {
		case errors.Is(err, plugin.ErrConfigNotFound):
			l.State, l.Status, l.Hint = Failing, "not found", hint(storeHints, ssv2.ReasonProviderRefNotFound)
		case err != nil:
			l.State, l.Status = Unknown, "cannot read it: "+err.Error()
		default:
			cfg = obj
			l.State, l.Status = OK, fmt.Sprintf("exists (generation %d)", obj.GetGeneration())
		}
	}
	r.add(l)
	if cfg == nil {
		return
	}
	s.credentialLinks(ctx, r, st, cfg, depth+1, requester)
}

func configName(ref plugin.Ref) string {
	return fmt.Sprintf("%s %s/%s (%s)", ref.Kind, ref.Namespace, ref.Name, provv2.GroupVersion)
}

// credentialLinks adds a link per credentials Secret key cfg names, read in
// the namespace the store resolves credentials in for requester. Only the
// presence of keys is reported, never a value.
func (s *session) credentialLinks(ctx context.Context, r *Report, st *stores.Store, cfg client.Object, depth int, requester string) {
	refs := secretRefs(cfg)
	if len(refs) == 0 {
		return
	}
	namespace := st.Scope(requester).Namespace
	for _, ref := range refs {
		l := Link{Depth: depth, What: "Secret " + namespace + "/" + ref.Name, Details: []string{"named by " + ref.Field}}
		if namespace == "" {
			l.What, l.State = "Secret "+ref.Name, Unknown
			l.Status = "read in each ExternalSecret's namespace (authenticationScope ManifestNamespace)"
			r.add(l)
			continue
		}
		var secret corev1.Secret
		err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, &secret)
		switch {
		case apierrors.IsNotFound(err):
			l.State, l.Status = Failing, "not found"
			l.Hint = fmt.Sprintf("create Secret %s/%s with key %q (eso checks again within %s)", namespace, ref.Name, ref.Key, outcomes.RecheckInterval)
		case err != nil:
			l.State, l.Status = Unknown, "cannot read it with your kubeconfig: "+shortError(err)
		case ref.Key != "" && !hasKey(&secret, ref.Key):
			l.State, l.Status = Failing, fmt.Sprintf("exists, but has no key %q (its keys: %s)", ref.Key, keyNames(&secret))
			l.Hint = fmt.Sprintf("add key %q to Secret %s/%s, or fix %s.key", ref.Key, namespace, ref.Name, ref.Field)
		default:
			l.State, l.Status = OK, fmt.Sprintf("exists, with key %q", ref.Key)
		}
		r.add(l)
	}
}

func hasKey(s *corev1.Secret, key string) bool {
	_, ok := s.Data[key]
	return ok
}

// keyNames lists a Secret's key names, sorted; never a value.
func keyNames(s *corev1.Secret) string {
	var keys []string
	for k := range s.Data {
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return "none"
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// shortError is an API error's message without the server's details.
func shortError(err error) string {
	if status, ok := err.(apierrors.APIStatus); ok {
		return string(status.Status().Reason) + ": " + status.Status().Message
	}
	return err.Error()
}
