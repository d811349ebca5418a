package stores

import (
	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// RefsOf lists the distinct stores an ExternalSecret reads from, the
// default store first: what the ExternalSecret controller resolves, and
// what the PushSecret controller checks a push would not feed back into.
func RefsOf(es *esv1.ExternalSecret) []esv1.SecretStoreRef {
	var refs []esv1.SecretStoreRef
	usesDefault := false
	note := func(ref *esv1.SecretStoreRef) {
		if ref != nil {
			refs = append(refs, *ref)
		} else {
			usesDefault = true
		}
	}
	for _, d := range es.Spec.Data {
		note(DataRef(d))
	}
	for _, d := range es.Spec.DataFrom {
		if d.SourceRef != nil && d.SourceRef.GeneratorRef != nil {
			continue // generated, not read from a store
		}
		note(DataFromRef(d))
	}
	if usesDefault && es.Spec.SecretStoreRef != nil {
		refs = append([]esv1.SecretStoreRef{*es.Spec.SecretStoreRef}, refs...)
	}
	seen := map[string]bool{}
	out := refs[:0]
	for _, r := range refs {
		kind := r.Kind
		if kind == "" {
			kind = KindSecretStore
		}
		// The same name under two apiVersions may be two stores.
		if k := kind + "/" + r.Name + "@" + r.APIVersion; !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// DataRef is the store a data entry names itself, nil for the default.
func DataRef(d esv1.ExternalSecretData) *esv1.SecretStoreRef {
	if d.SourceRef == nil {
		return nil
	}
	return &d.SourceRef.SecretStoreRef
}

// DataFromRef is the store a dataFrom entry names itself, nil for the
// default.
func DataFromRef(d esv1.ExternalSecretDataFromRemoteRef) *esv1.SecretStoreRef {
	if d.SourceRef == nil {
		return nil
	}
	return d.SourceRef.SecretStoreRef
}
