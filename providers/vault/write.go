package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// errKVv1Writes: KV v1 keeps no metadata to mark eso's secrets with, so eso
// cannot tell its own from anybody else's and does not write there.
var errKVv1Writes = fmt.Errorf("%w: writes need KV v2 (KV v1 has no metadata to mark eso's secrets)", plugin.ErrNotSupported)

// state reads a KV v2 secret's metadata: whether it exists, whether eso
// created it, and its current version for check-and-set.
func (c *Client) state(ctx context.Context, key string) (exists, managed bool, version int, err error) {
	meta, err := c.metadata(ctx, key)
	if err != nil || meta == nil {
		return false, false, 0, err
	}
	return true, meta.custom[plugin.ManagedByKey] == plugin.ManagedByValue, meta.version, nil
}

// kvMetadata is what eso uses of a KV v2 secret's metadata.
type kvMetadata struct {
	custom  map[string]string
	version int // current_version
}

// metadata reads key's KV v2 metadata; nil when the secret does not exist.
func (c *Client) metadata(ctx context.Context, key string) (*kvMetadata, error) {
	api, err := c.session.client(ctx)
	if err != nil {
		return nil, err
	}
	metaPath, err := c.kvPath("metadata", key)
	if err != nil {
		return nil, err
	}
	secret, err := api.Logical().ReadWithContext(ctx, metaPath)
	if err != nil {
		return nil, c.checked(readError(err, key, ""))
	}
	if secret == nil {
		return nil, nil
	}
	meta := &kvMetadata{custom: map[string]string{}}
	if v, ok := secret.Data["current_version"].(json.Number); ok {
		n, _ := v.Int64()
		meta.version = int(n)
	}
	if cm, ok := secret.Data["custom_metadata"].(map[string]any); ok {
		for k, v := range cm {
			meta.custom[k], _ = v.(string)
		}
	}
	return meta, nil
}

// PushSecret implements plugin.Writer with check-and-set: the write fails
// if the secret changed since it was read, instead of overwriting that change.
// A new secret is written with cas=0 ("must not exist") before it is marked
// as eso's, so a secret someone else creates meanwhile is never claimed.
func (c *Client) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	if err := kit.NoPushMetadata(req, "Vault"); err != nil {
		return err
	}
	if !c.v2 {
		return errKVv1Writes
	}
	exists, managed, version, err := c.state(ctx, req.RemoteKey)
	if err != nil {
		return err
	}
	if exists && !managed {
		if !req.Adopt {
			return fmt.Errorf("%w: secret %q (no custom_metadata %s=%s)", plugin.ErrNotManaged, req.RemoteKey, plugin.ManagedByKey, plugin.ManagedByValue)
		}
		if err := c.mark(ctx, req.RemoteKey); err != nil {
			return err
		}
	}
	var current []byte
	if exists {
		if current, err = c.data(ctx, req.RemoteKey, ""); err != nil && !errors.Is(err, plugin.ErrSecretNotFound) {
			return err
		}
	}
	data, err := pushData(current, req)
	if err != nil {
		return err
	}
	if exists && current != nil {
		if same, _ := sameJSON(current, data); same {
			return nil // unchanged: no new version
		}
	}
	return c.writeData(ctx, req.RemoteKey, data, version, !exists)
}

// pushData is the KV data a push writes: the value's JSON object, the value
// under "value" when it is not one, or current with one property set.
func pushData(current []byte, req plugin.PushRequest) (map[string]any, error) {
	raw := req.Value
	if req.Property != "" {
		var err error
		if raw, err = kit.SetProperty(current, req.Property, req.Value); err != nil {
			return nil, err
		}
	}
	if data, err := kit.DecodeObject(raw); err == nil {
		return data, nil
	}
	return map[string]any{"value": string(req.Value)}, nil
}

// writeData writes data with check-and-set at version and, for a new
// secret, then marks it as eso's.
func (c *Client) writeData(ctx context.Context, key string, data map[string]any, version int, mark bool) error {
	api, err := c.session.client(ctx)
	if err != nil {
		return err
	}
	dataPath, err := c.kvPath("data", key)
	if err != nil {
		return err
	}
	if _, err := api.Logical().WriteWithContext(ctx, dataPath, map[string]any{
		"data": data, "options": map[string]any{"cas": version}}); err != nil {
		return c.checked(kvError(err, fmt.Sprintf("writing secret %q (check-and-set at version %d)", key, version)))
	}
	if !mark {
		return nil
	}
	return c.mark(ctx, key)
}

// mark adds eso's ManagedBy entry to key's custom metadata, keeping the
// entries already there (a metadata write replaces the whole map).
func (c *Client) mark(ctx context.Context, key string) error {
	api, err := c.session.client(ctx)
	if err != nil {
		return err
	}
	meta, err := c.metadata(ctx, key)
	if err != nil {
		return err
	}
	custom := map[string]any{plugin.ManagedByKey: plugin.ManagedByValue}
	if meta != nil {
		for k, v := range meta.custom {
			if k != plugin.ManagedByKey {
				custom[k] = v
			}
		}
	}
	metaPath, _ := c.kvPath("metadata", key)
	if _, err := api.Logical().WriteWithContext(ctx, metaPath, map[string]any{"custom_metadata": custom}); err != nil {
		return c.checked(kvError(err, fmt.Sprintf("marking secret %q", key)))
	}
	return nil
}

// sameJSON reports whether the stored value equals data.
func sameJSON(current []byte, data map[string]any) (bool, error) {
	cur, err := kit.DecodeObject(current)
	if err != nil {
		return false, err
	}
	a, _ := json.Marshal(cur)
	b, _ := json.Marshal(data)
	return bytes.Equal(a, b), nil
}

// DeleteSecret implements plugin.Writer: only secrets eso created; with a
// property, only that field (and the secret when it was the last).
func (c *Client) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	if !c.v2 {
		return errKVv1Writes
	}
	var version int // the current version, for the check-and-set rewrite
	return kit.Deletion{
		Key: remoteKey, Property: property,
		State: func(ctx context.Context) (exists, managed bool, err error) {
			exists, managed, version, err = c.state(ctx, remoteKey)
			return exists, managed, err
		},
		Current: func(ctx context.Context) ([]byte, error) { return c.data(ctx, remoteKey, "") },
		Rewrite: func(ctx context.Context, rest []byte) error {
			data, err := kit.DecodeObject(rest)
			if err != nil {
				return err
			}
			return c.writeData(ctx, remoteKey, data, version, false)
		},
		Delete: func(ctx context.Context) error {
			api, err := c.session.client(ctx)
			if err != nil {
				return err
			}
			metaPath, _ := c.kvPath("metadata", remoteKey)
			if _, err := api.Logical().DeleteWithContext(ctx, metaPath); err != nil {
				return c.checked(kvError(err, fmt.Sprintf("deleting secret %q", remoteKey)))
			}
			return nil
		},
	}.Run(ctx)
}

// SecretExists implements plugin.Writer.
func (c *Client) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	_, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: remoteKey})
	if errors.Is(err, plugin.ErrSecretNotFound) {
		return false, nil
	}
	return err == nil, err
}
