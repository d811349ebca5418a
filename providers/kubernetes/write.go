package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Pushes write Secrets of the client's namespace: the remote key names the
// Secret, the property one of its keys; a push without a property gives
// the Secret the keys of the whole source Secret. eso marks the Secrets it
// creates with the label plugin.ManagedByKey and writes no other: an
// existing Secret without it (someone's, or a ServiceAccount token) is
// refused.

// current reads the remote Secret: nil when it does not exist.
func (c *Client) current(ctx context.Context, name string) (*corev1.Secret, error) {
	s, err := c.read(ctx, name)
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return s, nil
}

func isNotFound(err error) bool { return errors.Is(err, plugin.ErrSecretNotFound) }

func managed(s *corev1.Secret) bool {
	return s.Labels[plugin.ManagedByKey] == plugin.ManagedByValue
}

// pushMetadata is what a push's metadata may set on the Secret.
type pushMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PushSecret implements plugin.Writer; it writes only when the data (or
// the labels and annotations the metadata sets) differ.
func (c *Client) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	var md pushMetadata
	if err := kit.DecodePushMetadata(req.Metadata, &md); err != nil {
		return err
	}
	s, err := c.current(ctx, req.RemoteKey)
	if err != nil {
		return err
	}
	adopting := false
	if s != nil && !managed(s) {
		if !req.Adopt || (s.Type != corev1.SecretTypeOpaque && s.Type != "") {
			// A Secret Kubernetes fills (a ServiceAccount token, say) is
			// never eso's to take over.
			return fmt.Errorf("%w: Secret %s/%s (no label %s=%s)", plugin.ErrNotManaged, c.namespace, req.RemoteKey, plugin.ManagedByKey, plugin.ManagedByValue)
		}
		adopting = true
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[plugin.ManagedByKey] = plugin.ManagedByValue
	}
	var data map[string][]byte
	if req.Property != "" {
		data = map[string][]byte{}
		if s != nil {
			data = maps.Clone(s.Data)
		}
		data[req.Property] = req.Value
	} else {
		var fields map[string]string
		if err := json.Unmarshal(req.Value, &fields); err != nil {
			return fmt.Errorf("%w: a push to a Kubernetes Secret needs a property (the key to set) unless it pushes a whole Secret", plugin.ErrInvalidConfig)
		}
		data = make(map[string][]byte, len(fields))
		for k, v := range fields {
			data[k] = []byte(v)
		}
	}
	if s == nil {
		created := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: req.RemoteKey},
			Type: corev1.SecretTypeOpaque, Data: data}
		applyMetadata(created, md)
		return c.writeError(c.api.create(ctx, created), req.RemoteKey)
	}
	before := s.DeepCopy()
	s.Data = data
	applyMetadata(s, md)
	if !adopting && maps.EqualFunc(before.Data, s.Data, func(a, b []byte) bool { return string(a) == string(b) }) &&
		maps.Equal(before.Labels, s.Labels) && maps.Equal(before.Annotations, s.Annotations) {
		return nil
	}
	return c.writeError(c.api.update(ctx, s), req.RemoteKey)
}

// applyMetadata sets the metadata's labels and annotations (kept where the
// Secret has others) and eso's mark, which no metadata overrides.
func applyMetadata(s *corev1.Secret, md pushMetadata) {
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	maps.Copy(s.Labels, md.Labels)
	s.Labels[plugin.ManagedByKey] = plugin.ManagedByValue
	if len(md.Annotations) > 0 {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		maps.Copy(s.Annotations, md.Annotations)
	}
}

// DeleteSecret implements plugin.Writer: only Secrets eso created; with
// a property, only that key (and the Secret when it was the last).
func (c *Client) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	var s *corev1.Secret
	return kit.Deletion{
		Key: remoteKey, Property: property,
		State: func(ctx context.Context) (bool, bool, error) {
			var err error
			s, err = c.current(ctx, remoteKey)
			return s != nil, s != nil && managed(s), err
		},
		Current: func(context.Context) ([]byte, error) { return dataJSON(s.Data) },
		Rewrite: func(ctx context.Context, rest []byte) error {
			var fields map[string]string
			if err := json.Unmarshal(rest, &fields); err != nil {
				return err
			}
			s.Data = make(map[string][]byte, len(fields))
			for k, v := range fields {
				s.Data[k] = []byte(v)
			}
			return c.writeError(c.api.update(ctx, s), remoteKey)
		},
		Delete: func(ctx context.Context) error {
			if err := c.api.delete(ctx, s); err != nil && !apiNotFound(err) {
				return c.writeError(err, remoteKey)
			}
			return nil
		},
	}.Run(ctx)
}

// SecretExists implements plugin.Writer.
func (c *Client) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	s, err := c.current(ctx, remoteKey)
	return s != nil, err
}

// writeError maps an API error of a write to the provider contract's.
func (c *Client) writeError(err error, name string) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsInvalid(err):
		// The API server's message may quote what was written: name the
		// Secret only.
		return fmt.Errorf("%w: the API server refused Secret %s/%s as invalid (is the property a valid Secret key?)", plugin.ErrInvalidConfig, c.namespace, name)
	}
	return apiError(err, fmt.Sprintf("writing Secret %s/%s", c.namespace, name))
}
