package secretmanager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	smpb "cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// remoteSecret is what a write needs to know of a remote secret.
type remoteSecret struct {
	exists, managed bool
	// etag is the secret's metadata version, for a delete that must not
	// act on a secret changed (e.g. relabelled) since it was read.
	etag string
}

func (c *Client) remote(ctx context.Context, key string) (remoteSecret, error) {
	s, err := c.api.GetSecret(ctx, &smpb.GetSecretRequest{Name: c.secretName(key)})
	if status.Code(err) == codes.NotFound {
		return remoteSecret{}, nil
	}
	if err != nil {
		return remoteSecret{}, apiError(err, fmt.Sprintf("reading secret %q", key))
	}
	return remoteSecret{exists: true, managed: s.GetLabels()[plugin.ManagedByKey] == plugin.ManagedByValue, etag: s.GetEtag()}, nil
}

func errNotManaged(key string) error {
	return fmt.Errorf("%w: secret %q (no label %s=%s)", plugin.ErrNotManaged, key, plugin.ManagedByKey, plugin.ManagedByValue)
}

// current returns the value of the newest enabled version; found is false
// when the secret has none. "latest" names the newest version even when it
// is disabled, so then the versions are listed.
func (c *Client) current(ctx context.Context, key string) (value []byte, found bool, err error) {
	value, err = c.value(ctx, key, "latest")
	if !errors.Is(err, plugin.ErrSecretNotFound) {
		return value, err == nil, err
	}
	it := c.api.ListSecretVersions(ctx, &smpb.ListSecretVersionsRequest{Parent: c.secretName(key), Filter: "state:ENABLED"})
	newest := 0
	for {
		v, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			return nil, false, apiError(err, fmt.Sprintf("listing versions of secret %q", key))
		}
		if n, err := strconv.Atoi(v.Name[strings.LastIndex(v.Name, "/")+1:]); err == nil && n > newest {
			newest = n
		}
	}
	if newest == 0 {
		return nil, false, nil
	}
	value, err = c.value(ctx, key, strconv.Itoa(newest))
	return value, err == nil, err
}

// PushSecret implements plugin.Writer: it creates the secret labelled as
// eso's, or adds a version to one eso created; a property is merged into the
// JSON object the secret holds. No version is added when the newest enabled
// version already holds the value.
func (c *Client) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	var md pushMetadata
	if err := kit.DecodePushMetadata(req.Metadata, &md); err != nil {
		return err
	}
	remote, err := c.remote(ctx, req.RemoteKey)
	if err != nil {
		return err
	}
	if remote.exists && !remote.managed {
		if !req.Adopt {
			return errNotManaged(req.RemoteKey)
		}
		if err := c.mark(ctx, req.RemoteKey, remote.etag); err != nil {
			return err
		}
	}
	var current []byte
	var found bool
	if remote.exists {
		if current, found, err = c.current(ctx, req.RemoteKey); err != nil {
			return err
		}
	}
	value := req.Value
	if req.Property != "" {
		if value, err = kit.SetProperty(current, req.Property, req.Value); err != nil {
			return err
		}
	}
	if remote.exists {
		if err := c.applyMetadata(ctx, req.RemoteKey, md); err != nil {
			return err
		}
	}
	if found && bytes.Equal(current, value) {
		return nil
	}
	if !remote.exists {
		if err := c.create(ctx, req.RemoteKey, md); err != nil {
			return err
		}
	}
	return c.addVersion(ctx, req.RemoteKey, value)
}

// pushMetadata is what a push's metadata may set (upstream's
// PushSecretMetadata fields for Secret Manager that eso applies): labels
// and annotations, added to those the secret has.
type pushMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// applyMetadata adds the metadata's labels and annotations the secret lacks
// (or holds otherwise), with the etag read: nothing is written when it
// holds them all.
func (c *Client) applyMetadata(ctx context.Context, key string, md pushMetadata) error {
	if len(md.Labels) == 0 && len(md.Annotations) == 0 {
		return nil
	}
	s, err := c.api.GetSecret(ctx, &smpb.GetSecretRequest{Name: c.secretName(key)})
	if err != nil {
		return apiError(err, fmt.Sprintf("reading secret %q", key))
	}
	update := &smpb.Secret{Name: c.secretName(key), Etag: s.GetEtag()}
	var paths []string
	if merged, changed := mergeMap(s.GetLabels(), md.Labels); changed {
		update.Labels, paths = merged, append(paths, "labels")
	}
	if merged, changed := mergeMap(s.GetAnnotations(), md.Annotations); changed {
		update.Annotations, paths = merged, append(paths, "annotations")
	}
	if len(paths) == 0 {
		return nil
	}
	if _, err := c.api.UpdateSecret(ctx, &smpb.UpdateSecretRequest{Secret: update, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}}); err != nil {
		return apiError(err, fmt.Sprintf("updating the metadata of secret %q", key))
	}
	return nil
}

// mergeMap is have with want's entries set, and whether that changed it.
func mergeMap(have, want map[string]string) (map[string]string, bool) {
	out := map[string]string{}
	for k, v := range have {
		out[k] = v
	}
	changed := false
	for k, v := range want {
		if out[k] != v {
			out[k], changed = v, true
		}
	}
	return out, changed
}

// create creates an empty secret labelled as eso's (with the metadata's
// labels and annotations): replicated automatically, or for a regional
// configuration in its location.
func (c *Client) create(ctx context.Context, key string, md pushMetadata) error {
	labels, _ := mergeMap(md.Labels, map[string]string{plugin.ManagedByKey: plugin.ManagedByValue})
	secret := &smpb.Secret{Labels: labels, Annotations: md.Annotations}
	if !c.regional {
		secret.Replication = &smpb.Replication{Replication: &smpb.Replication_Automatic_{Automatic: &smpb.Replication_Automatic{}}}
	}
	_, err := c.api.CreateSecret(ctx, &smpb.CreateSecretRequest{Parent: c.parent, SecretId: key, Secret: secret})
	if status.Code(err) == codes.AlreadyExists {
		// Created since it was read: write to it only if eso created it.
		remote, err := c.remote(ctx, key)
		if err != nil {
			return err
		}
		if !remote.managed {
			return errNotManaged(key)
		}
		return nil
	}
	if err != nil {
		return apiError(err, fmt.Sprintf("creating secret %q", key))
	}
	return nil
}

// mark adds eso's label to a secret someone else created (adoption), with
// the etag read, keeping its other labels.
func (c *Client) mark(ctx context.Context, key, etag string) error {
	s, err := c.api.GetSecret(ctx, &smpb.GetSecretRequest{Name: c.secretName(key)})
	if err != nil {
		return apiError(err, fmt.Sprintf("reading secret %q", key))
	}
	labels := map[string]string{}
	for k, v := range s.GetLabels() {
		labels[k] = v
	}
	labels[plugin.ManagedByKey] = plugin.ManagedByValue
	_, err = c.api.UpdateSecret(ctx, &smpb.UpdateSecretRequest{
		Secret:     &smpb.Secret{Name: c.secretName(key), Labels: labels, Etag: etag},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"labels"}},
	})
	if err != nil {
		return apiError(err, fmt.Sprintf("marking secret %q as eso's", key))
	}
	return nil
}

func (c *Client) addVersion(ctx context.Context, key string, value []byte) error {
	_, err := c.api.AddSecretVersion(ctx, &smpb.AddSecretVersionRequest{Parent: c.secretName(key), Payload: &smpb.SecretPayload{Data: value}})
	if err != nil {
		return apiError(err, fmt.Sprintf("adding a version to secret %q", key))
	}
	return nil
}

// DeleteSecret implements plugin.Writer: only secrets eso created are
// deleted, and only if unchanged since they were read (etag); with a
// property, only that field goes (a new version without it), and the secret
// when it was the last.
func (c *Client) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	var etag string // guards the delete
	return kit.Deletion{
		Key: remoteKey, Property: property,
		State: func(ctx context.Context) (bool, bool, error) {
			remote, err := c.remote(ctx, remoteKey)
			etag = remote.etag
			return remote.exists, remote.managed, err
		},
		Current: func(ctx context.Context) ([]byte, error) {
			current, found, err := c.current(ctx, remoteKey)
			if err == nil && !found {
				return nil, fmt.Errorf("%w: secret %q has no enabled version to delete property %q from", plugin.ErrSecretNotFound, remoteKey, property)
			}
			return current, err
		},
		Rewrite: func(ctx context.Context, rest []byte) error { return c.addVersion(ctx, remoteKey, rest) },
		Delete: func(ctx context.Context) error {
			err := c.api.DeleteSecret(ctx, &smpb.DeleteSecretRequest{Name: c.secretName(remoteKey), Etag: etag})
			switch status.Code(err) {
			case codes.OK, codes.NotFound: // NotFound: deleted meanwhile
				return nil
			case codes.FailedPrecondition:
				return fmt.Errorf("secret %q changed since it was read (etag mismatch): not deleted", remoteKey)
			default:
				return apiError(err, fmt.Sprintf("deleting secret %q", remoteKey))
			}
		},
	}.Run(ctx)
}

// SecretExists implements plugin.Writer.
func (c *Client) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	remote, err := c.remote(ctx, remoteKey)
	return remote.exists, err
}
