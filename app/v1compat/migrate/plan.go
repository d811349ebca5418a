// Package migrate moves objects from upstream's external-secrets.io/v1
// stores to eso's v2alpha1 stores: each v1 store becomes a v2alpha1 store
// of the same kind and name plus a provider configuration object (the v1
// layer's translation, so the same configuration serves the same reads),
// and every store reference of ExternalSecrets, ClusterExternalSecrets,
// PushSecrets and ClusterPushSecrets that meant the v1 store names the
// v2alpha1 one. Credentials are referenced as before, never copied. A store
// the translation refuses is reported and left, with its users, as it was.
package migrate

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	provv2 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	upgen "github.com/eso-dev/eso/apis/upstreamv1/generators"
	"github.com/eso-dev/eso/apis/upstreamv1/v1stores"
	"github.com/eso-dev/eso/app/grpcclient"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/app/v1compat"
)

// Direction says which way references move.
type Direction int

const (
	// ToV2 points references at the v2alpha1 stores, creating them.
	ToV2 Direction = iota
	// ToV1 points references back at the v1 stores (a rollback); nothing
	// is created or deleted.
	ToV1
)

// Objects are what a migration reads: the v1 stores, the v2alpha1 stores
// and provider configurations already there, and the objects that name
// stores.
type Objects struct {
	SecretStores          []v1stores.SecretStore
	ClusterSecretStores   []v1stores.ClusterSecretStore
	Present               []client.Object // v2alpha1 stores and provider configurations already there
	ExternalSecrets       []esv1.ExternalSecret
	ClusterExternalSecret []esv1.ClusterExternalSecret
	PushSecrets           []esv1alpha1.PushSecret
	ClusterPushSecrets    []esv1alpha1.ClusterPushSecret
	// Generators are upstream's namespaced generator objects
	// (generators.external-secrets.io); ClusterGenerators its cluster ones.
	Generators        []client.Object
	ClusterGenerators []upgen.ClusterGenerator
}

// Options tune a migration.
type Options struct {
	Direction Direction
	// ClusterConfigNamespace holds the provider configurations of every v1
	// ClusterSecretStore migrated: a namespace only cluster admins write,
	// since whoever edits a cluster store's configuration decides where
	// every allowed namespace's requests go. Their credentials still
	// resolve where the v1 store's references say.
	ClusterConfigNamespace string
	// Defaults returns obj as the API server would store it (its defaults
	// filled), so that an object already there is compared field for
	// field. Nil compares objects as they are.
	Defaults func(obj client.Object) (client.Object, error)
	// Endpoints are written into the configurations, as the v1 layer
	// applies them (from the environment of the eso that served the stores).
	Endpoints v1compat.Endpoints
	// OnlyUsed migrates only the ClusterSecretStores the objects read use
	// (a migration of one namespace).
	OnlyUsed bool
}

// Plan is what a migration does.
type Plan struct {
	// Create are the v2alpha1 stores and provider configurations to create.
	Create []client.Object
	// Repoint are the objects whose store references change, as they will be.
	Repoint []client.Object
	// Changes describe each reference changed, one line each.
	Changes []string
	// Refused name each v1 store not migrated and why.
	Refused []string
	// Notes name what the migration carries over without effect, or could not decide.
	Notes []string
	// Stores are the stores the references move to, each with the objects
	// created for it, to wait for one by one.
	Stores []StorePlan
	// Needs are, for each object of Repoint (same index), the stores (indexes
	// into Stores) its references move to: it moves once all are Ready.
	Needs [][]int
	// MissingConfigNamespace names the ClusterSecretStores refused for want
	// of ClusterConfigNamespace.
	MissingConfigNamespace []string
	// Generators are the upstream generator objects moved to eso's kinds;
	// Restore, on a rollback, the upstream objects created again from them.
	Generators []GeneratorMove
	Restore    []client.Object
}

// StorePlan is one store a migration moves references to: what is created
// for it, and the store to wait for.
type StorePlan struct {
	Store  client.Object
	Create []client.Object
}

// MigratedFrom marks the v2alpha1 stores and generator configurations eso
// migrate created, so that a rollback moves back exactly the references to
// those stores.
const MigratedFrom = "migrate.eso.external-secrets.io/from"

// objectKey identifies an object by group, kind, namespace and name: a
// provider's and a generator's configuration kinds may share a name (Fake).
func objectKey(o client.Object) string {
	gvk := o.GetObjectKind().GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// errOtherSpec: an object of the name is there with another spec. Its
// users would read another backend, or one whoever made it chose: it is
// never taken over.
var errOtherSpec = errors.New("exists with another spec")

// same checks that have, an object already there, has exactly the spec
// want would be stored with: every field equal, none added (the API
// server's defaults, which defaults fills into want, aside).
func same(have, want client.Object, defaults func(client.Object) (client.Object, error)) error {
	stored := want
	if defaults != nil {
		d, err := defaults(want)
		if err != nil {
			return fmt.Errorf("%s is there and cannot be compared: %w", describe(want), err)
		}
		stored = d
	}
	if !equality.Semantic.DeepEqual(specOf(have), specOf(stored)) {
		return fmt.Errorf("%s %w", describe(want), errOtherSpec)
	}
	return nil
}

// storeKey identifies a store of either kind: "SecretStore/ns/name" or
// "ClusterSecretStore//name".
func storeKey(kind, namespace, name string) string {
	if kind == stores.KindClusterSecretStore {
		namespace = ""
	}
	return kind + "/" + namespace + "/" + name
}

// Build plans the migration of objs.
func Build(objs Objects, opts Options) Plan {
	var p Plan
	sp := storePlanner{plan: &p, opts: opts, present: map[string]client.Object{}, moved: map[string]int{}}
	for _, o := range objs.Present {
		sp.present[objectKey(o)] = o
	}
	for i := range objs.SecretStores {
		sp.consider(&objs.SecretStores[i])
	}
	used := usedClusterStores(objs)
	for i := range objs.ClusterSecretStores {
		s := &objs.ClusterSecretStores[i]
		if !opts.OnlyUsed || used[s.Name] {
			sp.consider(s)
		}
	}
	v1Exists := map[string]bool{}
	for _, s := range objs.SecretStores {
		v1Exists[storeKey(stores.KindSecretStore, s.Namespace, s.Name)] = true
	}
	for _, s := range objs.ClusterSecretStores {
		v1Exists[storeKey(stores.KindClusterSecretStore, "", s.Name)] = true
	}
	r := repointer{opts: opts, moved: sp.moved, v1Exists: v1Exists, plan: &p}
	r.all(objs)
	planGenerators(&p, objs, sp.present, opts)
	return p
}

// storePlanner plans the stores of a migration, one v1 store at a time.
type storePlanner struct {
	plan *Plan
	opts Options
	// present are the v2 objects already there, by "Kind/ns/name".
	present map[string]client.Object
	// moved are the v1 stores whose users move: index into plan.Stores.
	moved map[string]int
}

// consider plans one v1 store: what to create for it, or why it is refused.
func (sp *storePlanner) consider(obj client.Object) {
	p, opts := sp.plan, sp.opts
	// The layer's own translation: what eso serves the v1 store as is
	// exactly what the migration writes.
	s := v1compat.Wrap(obj, opts.Endpoints)
	key := storeKey(s.Kind, s.Namespace, s.Name)
	what := s.Kind + " " + strings.TrimPrefix(s.Namespace+"/"+s.Name, "/") + " (external-secrets.io/v1)"
	if s.Untranslatable != nil {
		p.Refused = append(p.Refused, what+": "+s.Untranslatable.Error())
		return
	}
	for _, n := range s.Notes {
		p.Notes = append(p.Notes, what+": "+n)
	}
	if opts.Direction == ToV1 {
		// Back only from a v2alpha1 store this migration made.
		v2 := sp.present[ssv2.GroupVersion.Group+"/"+s.Kind+"/"+s.Namespace+"/"+s.Name]
		if v2 != nil && v2.GetAnnotations()[MigratedFrom] != "" {
			sp.moved[key] = len(p.Stores)
			p.Stores = append(p.Stores, StorePlan{Store: obj})
		}
		return
	}
	if err := neverWorks(s); err != nil {
		p.Refused = append(p.Refused, what+": "+err.Error())
		return
	}
	store, cfg, err := v2Objects(s, opts.ClusterConfigNamespace)
	if errors.Is(err, errNoConfigNamespace) {
		p.MissingConfigNamespace = append(p.MissingConfigNamespace, s.Name)
	}
	if err != nil {
		p.Refused = append(p.Refused, what+": "+err.Error())
		return
	}
	var create []client.Object
	for _, o := range []client.Object{cfg, store} {
		if o == nil {
			continue
		}
		have, ok := sp.present[objectKey(o)]
		if !ok {
			create = append(create, o)
			continue
		}
		if err := same(have, o, opts.Defaults); err != nil {
			p.Refused = append(p.Refused, what+": "+err.Error())
			return
		}
	}
	p.Create = append(p.Create, create...)
	sp.moved[key] = len(p.Stores)
	p.Stores = append(p.Stores, StorePlan{Store: store, Create: create})
}

// usedClusterStores names the ClusterSecretStores the ExternalSecrets and
// PushSecrets of objs name.
func usedClusterStores(objs Objects) map[string]bool {
	used := map[string]bool{}
	note := func(kind, name string) {
		if kind == stores.KindClusterSecretStore {
			used[name] = true
		}
	}
	for _, es := range objs.ExternalSecrets {
		if ref := es.Spec.SecretStoreRef; ref != nil {
			note(ref.Kind, ref.Name)
		}
		for _, d := range es.Spec.Data {
			if d.SourceRef != nil {
				note(d.SourceRef.SecretStoreRef.Kind, d.SourceRef.SecretStoreRef.Name)
			}
		}
		for _, d := range es.Spec.DataFrom {
			if d.SourceRef != nil && d.SourceRef.SecretStoreRef != nil {
				note(d.SourceRef.SecretStoreRef.Kind, d.SourceRef.SecretStoreRef.Name)
			}
		}
	}
	for _, ps := range objs.PushSecrets {
		for _, ref := range ps.Spec.SecretStoreRefs {
			note(ref.Kind, ref.Name)
		}
	}
	return used
}

// errNoConfigNamespace: a ClusterSecretStore's configuration has nowhere
// to go.
var errNoConfigNamespace = errors.New("a ClusterSecretStore's provider configuration is written only to a namespace that cluster admins alone write " +
	"(whoever edits it decides where every allowed namespace's requests go): pass --cluster-config-namespace")

// neverWorks refuses a store that could not become Ready whatever
// happens in the cluster, so that it is reported now rather than waited
// for: a namespaced plugin store whose client certificate is in another
// namespace, or one asking for ServiceAccount authentication.
func neverWorks(s *stores.Store) error {
	pc := s.Spec.ProviderConfig
	if pc.Address == "" || pc.Auth == nil {
		return nil
	}
	if pc.Auth.ServiceAccountRef != nil {
		return fmt.Errorf("spec.provider.plugin.auth.serviceAccountRef: not supported for remote providers; use clientCertificate")
	}
	if cert := pc.Auth.ClientCertificate; s.Cluster == nil && cert != nil && cert.Namespace != "" && cert.Namespace != s.Namespace {
		return fmt.Errorf("spec.provider.plugin.auth.clientCertificate: %w: Secret %s/%s is not in namespace %s",
			grpcclient.ErrCertificateNamespace, cert.Namespace, cert.Name, s.Namespace)
	}
	return nil
}

// v2Objects are the v2alpha1 store and provider configuration a translated
// v1 store becomes (no configuration for a plugin store: its configuration
// is the provider service's). A ClusterSecretStore's configuration goes to
// clusterConfigNamespace whatever namespace its credentials are in: the
// store keeps resolving them there (credentialsNamespace).
func v2Objects(s *stores.Store, clusterConfigNamespace string) (client.Object, client.Object, error) {
	spec := s.Spec.DeepCopy()
	var cluster *ssv2.ClusterSecretStoreSpec
	if s.Cluster != nil {
		cluster = s.Cluster.DeepCopy()
	}
	var cfg client.Object
	if s.Inline != nil {
		cfg = s.Inline.DeepCopyObject().(client.Object)
		cfg.SetUID("") // the v1 store's identity, which the new object does not have
		cfg.SetGeneration(0)
		cfg.SetOwnerReferences(nil)
		if cluster != nil {
			if clusterConfigNamespace == "" {
				return nil, nil, errNoConfigNamespace
			}
			if credentials := spec.ProviderConfig.ProviderRef.Namespace; cluster.AuthenticationScope == ssv2.ProviderNamespace &&
				credentials != "" && credentials != clusterConfigNamespace {
				cluster.CredentialsNamespace = credentials
			}
			cfg.SetNamespace(clusterConfigNamespace)
			spec.ProviderConfig.ProviderRef.Namespace = clusterConfigNamespace
		}
		cfg.GetObjectKind().SetGroupVersionKind(provv2.GroupVersion.WithKind(spec.ProviderConfig.ProviderRef.Kind))
	}
	// The store keeps the v1 store's labels (PushSecrets may select it by
	// them) and annotations, and says where it came from.
	meta := metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: maps.Clone(s.Object.GetLabels()), Annotations: map[string]string{}}
	for k, v := range s.Object.GetAnnotations() {
		if k != corev1.LastAppliedConfigAnnotation {
			meta.Annotations[k] = v
		}
	}
	meta.Annotations[MigratedFrom] = esv1.StoreAPIVersionV1
	if cluster != nil {
		css := &ssv2.ClusterSecretStore{ObjectMeta: meta, Spec: *cluster}
		css.Spec.SecretStoreSpec = *spec
		css.SetGroupVersionKind(ssv2.GroupVersion.WithKind(stores.KindClusterSecretStore))
		return css, cfg, nil
	}
	if spec.ProviderConfig.ProviderRef.Namespace == s.Namespace {
		spec.ProviderConfig.ProviderRef.Namespace = "" // a SecretStore's own, implied
	}
	ss := &ssv2.SecretStore{ObjectMeta: meta, Spec: *spec}
	ss.SetGroupVersionKind(ssv2.GroupVersion.WithKind(stores.KindSecretStore))
	return ss, cfg, nil
}

// repointer rewrites store references.
type repointer struct {
	opts     Options
	moved    map[string]int // stores whose users move: index into plan.Stores
	v1Exists map[string]bool
	plan     *Plan
	needs    []int // the stores the object being rewritten moves to
}

// target is the apiVersion a reference to the store (kind, name) from
// namespace gets, or "" when it stays as it is.
func (r *repointer) target(ref *esv1.SecretStoreRef, namespace string) string {
	kind := ref.Kind
	if kind == "" {
		kind = stores.KindSecretStore
	}
	key := storeKey(kind, namespace, ref.Name)
	i, ok := r.moved[key]
	if !ok {
		return ""
	}
	to := ""
	switch r.opts.Direction {
	case ToV2:
		// Only references that meant the v1 store: explicit, or none
		// while a v1 store of the name exists.
		if ref.APIVersion == esv1.StoreAPIVersionV1 || (ref.APIVersion == "" && r.v1Exists[key]) {
			to = esv1.StoreAPIVersionV2Alpha1
		}
	case ToV1:
		if ref.APIVersion == esv1.StoreAPIVersionV2Alpha1 {
			to = esv1.StoreAPIVersionV1
		}
	}
	if to != "" && !slices.Contains(r.needs, i) {
		r.needs = append(r.needs, i)
	}
	return to
}

// add queues obj, whose references were rewritten, to move once the
// stores it now names are Ready.
func (r *repointer) add(obj client.Object) {
	r.plan.Repoint = append(r.plan.Repoint, obj)
	r.plan.Needs = append(r.plan.Needs, r.needs)
	r.needs = nil
}

// refs rewrites every store reference of an ExternalSecret spec used from
// namespace, describing each change under what.
func (r *repointer) refs(spec *esv1.ExternalSecretSpec, namespace, what string) bool {
	changed := false
	visit := func(path string, ref *esv1.SecretStoreRef) {
		if ref == nil || ref.Name == "" {
			return
		}
		if to := r.target(ref, namespace); to != "" {
			r.plan.Changes = append(r.plan.Changes, fmt.Sprintf("%s: %s.apiVersion: %q -> %q", what, path, ref.APIVersion, to))
			ref.APIVersion, changed = to, true
		}
	}
	visit("spec.secretStoreRef", spec.SecretStoreRef)
	for i := range spec.Data {
		if s := spec.Data[i].SourceRef; s != nil {
			visit(fmt.Sprintf("spec.data[%d].sourceRef.storeRef", i), &s.SecretStoreRef)
		}
	}
	for i := range spec.DataFrom {
		if s := spec.DataFrom[i].SourceRef; s != nil {
			visit(fmt.Sprintf("spec.dataFrom[%d].sourceRef.storeRef", i), s.SecretStoreRef)
		}
	}
	return changed
}

// pushRefs rewrites the named store references of a PushSecret spec.
func (r *repointer) pushRefs(spec *esv1alpha1.PushSecretSpec, namespace, what string) bool {
	changed := false
	visit := func(path string, ref *esv1alpha1.PushSecretStoreRef) {
		if ref == nil {
			return
		}
		if ref.Name == "" {
			if ref.APIVersion == "" {
				r.plan.Notes = append(r.plan.Notes, what+": "+path+" selects stores by labels without an apiVersion: it keeps selecting v1 stores while they exist")
			}
			return
		}
		es := esv1.SecretStoreRef{Name: ref.Name, Kind: ref.Kind, APIVersion: ref.APIVersion}
		if to := r.target(&es, namespace); to != "" {
			r.plan.Changes = append(r.plan.Changes, fmt.Sprintf("%s: %s.apiVersion: %q -> %q", what, path, ref.APIVersion, to))
			ref.APIVersion, changed = to, true
		}
	}
	for i := range spec.SecretStoreRefs {
		visit(fmt.Sprintf("spec.secretStoreRefs[%d]", i), &spec.SecretStoreRefs[i])
	}
	for i := range spec.DataTo {
		visit(fmt.Sprintf("spec.dataTo[%d].storeRef", i), spec.DataTo[i].StoreRef)
	}
	return changed
}

// all rewrites the store references of every object that has them. A
// ClusterExternalSecret or ClusterPushSecret stamps its spec into many
// namespaces: it moves only when its stores moved for all of them, which
// for SecretStores cannot be known here, so only its ClusterSecretStore
// references move.
func (r *repointer) all(objs Objects) {
	for i := range objs.ExternalSecrets {
		es := objs.ExternalSecrets[i].DeepCopy()
		if isStamped(es) {
			continue // its ClusterExternalSecret's spec moves it
		}
		if r.refs(&es.Spec, es.Namespace, "ExternalSecret "+es.Namespace+"/"+es.Name) {
			es.SetGroupVersionKind(esv1.GroupVersion.WithKind("ExternalSecret"))
			r.add(es)
		}
	}
	for i := range objs.PushSecrets {
		ps := objs.PushSecrets[i].DeepCopy()
		if isStamped(ps) {
			continue
		}
		if r.pushRefs(&ps.Spec, ps.Namespace, "PushSecret "+ps.Namespace+"/"+ps.Name) {
			ps.SetGroupVersionKind(esv1alpha1.GroupVersion.WithKind("PushSecret"))
			r.add(ps)
		}
	}
	for i := range objs.ClusterExternalSecret {
		ces := objs.ClusterExternalSecret[i].DeepCopy()
		kind := ""
		if ref := ces.Spec.ExternalSecretSpec.SecretStoreRef; ref != nil {
			kind = ref.Kind
		}
		if r.clusterOnly(kind, "ClusterExternalSecret "+ces.Name) &&
			r.refs(&ces.Spec.ExternalSecretSpec, "", "ClusterExternalSecret "+ces.Name) {
			ces.SetGroupVersionKind(esv1.GroupVersion.WithKind("ClusterExternalSecret"))
			r.add(ces)
		}
	}
	for i := range objs.ClusterPushSecrets {
		cps := objs.ClusterPushSecrets[i].DeepCopy()
		kinds := ""
		for _, ref := range cps.Spec.PushSecretSpec.SecretStoreRefs {
			if ref.Kind != stores.KindClusterSecretStore {
				kinds = stores.KindSecretStore
			}
		}
		if r.clusterOnly(kinds, "ClusterPushSecret "+cps.Name) && r.pushRefs(&cps.Spec.PushSecretSpec, "", "ClusterPushSecret "+cps.Name) {
			cps.SetGroupVersionKind(esv1alpha1.GroupVersion.WithKind("ClusterPushSecret"))
			r.add(cps)
		}
	}
	slices.Sort(r.plan.Changes)
}

// clusterOnly says whether a cluster object's references are all to
// ClusterSecretStores, noting it when not.
func (r *repointer) clusterOnly(kind, what string) bool {
	if kind == stores.KindClusterSecretStore {
		return true
	}
	r.plan.Notes = append(r.plan.Notes, what+" names a SecretStore, which each namespace has its own of: set its secretStoreRef.apiVersion by hand once every namespace's store is migrated")
	return false
}

// isStamped reports whether a ClusterExternalSecret or ClusterPushSecret
// made obj (it would rewrite the object back).
func isStamped(obj client.Object) bool {
	for _, o := range obj.GetOwnerReferences() {
		if o.Kind == "ClusterExternalSecret" || o.Kind == "ClusterPushSecret" {
			return true
		}
	}
	return false
}
