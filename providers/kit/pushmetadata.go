package kit

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/eso-dev/eso/providers/plugin"
)

// PushMetadataAPIVersion and PushMetadataKind are what a PushSecret entry's
// metadata names itself, as upstream documents it.
const (
	PushMetadataAPIVersion = "kubernetes.external-secrets.io/v1alpha1"
	PushMetadataKind       = "PushSecretMetadata"
)

// DecodePushMetadata reads a push's metadata into spec (a provider's
// struct of the fields it applies): the document {apiVersion, kind, spec},
// or a bare spec as some upstream examples write it. A field spec lacks is
// an error naming it: eso never drops a setting silently. Labels or tags
// that set eso's own ManagedBy mark are refused whatever the provider: a
// tenant could make any secret look like eso's.
func DecodePushMetadata(raw []byte, spec any) error {
	var doc struct {
		APIVersion string          `json:"apiVersion"`
		Kind       string          `json:"kind"`
		Spec       json.RawMessage `json:"spec"`
	}
	body := raw
	if err := json.Unmarshal(raw, &doc); err == nil && (doc.APIVersion != "" || doc.Kind != "" || doc.Spec != nil) {
		if doc.APIVersion != PushMetadataAPIVersion || doc.Kind != PushMetadataKind {
			return fmt.Errorf("%w: metadata is apiVersion %q kind %q, want %s %s", plugin.ErrInvalidConfig, doc.APIVersion, doc.Kind, PushMetadataAPIVersion, PushMetadataKind)
		}
		body = doc.Spec
	}
	if len(body) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return fmt.Errorf("%w: metadata: %v", plugin.ErrInvalidConfig, err)
	}
	// The marks are read from the whole body, as strictly as spec: input
	// spec's decoder stops short of (trailing data) or labels and tags that
	// are not maps are refused rather than left unchecked.
	var marks struct{ Labels, Tags map[string]string }
	if err := json.Unmarshal(body, &marks); err != nil {
		return fmt.Errorf("%w: metadata: %v", plugin.ErrInvalidConfig, err)
	}
	if err := notOwnMark(marks.Labels, "label"); err != nil {
		return err
	}
	return notOwnMark(marks.Tags, "tag")
}

// NoPushMetadata refuses a push carrying metadata, for providers that apply
// none.
func NoPushMetadata(req plugin.PushRequest, provider string) error {
	if len(req.Metadata) > 0 {
		return fmt.Errorf("%w: %s applies no push metadata", plugin.ErrNotSupported, provider)
	}
	return nil
}

// notOwnMark refuses metadata that sets eso's own ManagedBy mark (as a tag
// or label, what).
func notOwnMark(m map[string]string, what string) error {
	if _, ok := m[plugin.ManagedByKey]; ok {
		return fmt.Errorf("%w: metadata may not set the %s %s: it is eso's", plugin.ErrInvalidConfig, plugin.ManagedByKey, what)
	}
	return nil
}
