package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers"
)

// errKVv1Writes: KV v1 keeps no metadata to mark eso's secrets with, so eso
// cannot tell its own from anybody else's and does not write there.
var errKVv1Writes = fmt.Errorf("%w: writes need KV v2 (KV v1 has no metadata to mark eso's secrets)", providers.ErrNotSupported)

// state reads a KV v2 secret's metadata: whether it exists, whether eso
// created it, and its current version for check-and-set.
func (c *Client) state(ctx context.Context, key string) (exists, managed bool, version int, err error) {
	api, err := c.session.client(ctx)
	if err != nil {
		return false, false, 0, err
	}
	meta, err := api.Logical().ReadWithContext(ctx, path.Join(c.mount, "metadata", key))
	if err != nil {
		return false, false, 0, readError(err, key, "")
	}
	if meta == nil {
		return false, false, 0, nil
	}
	if v, ok := meta.Data["current_version"].(json.Number); ok {
		n, _ := v.Int64()
		version = int(n)
	}
	cm, _ := meta.Data["custom_metadata"].(map[string]any)
	return true, cm[providers.ManagedByKey] == providers.ManagedByValue, version, nil
}

// PushSecret implements providers.Writer with check-and-set: the write fails
// if the secret changed since it was read, instead of overwriting that change.
func (c *Client) PushSecret(ctx context.Context, req providers.PushRequest) error {
	if !c.v2 {
		return errKVv1Writes
	}
	exists, managed, version, err := c.state(ctx, req.RemoteKey)
	if err != nil {
		return err
	}
	if exists && !managed {
		return fmt.Errorf("%w: secret %q (no custom_metadata %s=%s)", providers.ErrNotManaged, req.RemoteKey, providers.ManagedByKey, providers.ManagedByValue)
	}
	var data map[string]any
	if req.Property != "" {
		var current []byte
		if exists {
			if current, err = c.data(ctx, req.RemoteKey, ""); err != nil && !errors.Is(err, providers.ErrSecretNotFound) {
				return err
			}
		}
		if data, err = propertyData(current, req.Property, req.Value); err != nil {
			return err
		}
	} else if err := json.Unmarshal(req.Value, &data); err != nil || data == nil {
		// Not a JSON object: stored under the key "value".
		data = map[string]any{"value": string(req.Value)}
	}
	api, err := c.session.client(ctx)
	if err != nil {
		return err
	}
	if !exists {
		// Mark first, then write the first version with cas=0 ("must not exist").
		if _, err := api.Logical().WriteWithContext(ctx, path.Join(c.mount, "metadata", req.RemoteKey), map[string]any{
			"custom_metadata": map[string]any{providers.ManagedByKey: providers.ManagedByValue}}); err != nil {
			return fmt.Errorf("marking secret %q: %s", req.RemoteKey, vaultMessage(err))
		}
	}
	if _, err := api.Logical().WriteWithContext(ctx, path.Join(c.mount, "data", req.RemoteKey), map[string]any{
		"data": data, "options": map[string]any{"cas": version}}); err != nil {
		return fmt.Errorf("writing secret %q (check-and-set at version %d): %s", req.RemoteKey, version, vaultMessage(err))
	}
	return nil
}

func propertyData(current []byte, property string, value []byte) (map[string]any, error) {
	merged, err := providers.SetProperty(current, property, value)
	if err != nil {
		return nil, err
	}
	var data map[string]any
	return data, json.Unmarshal(merged, &data)
}

// DeleteSecret implements providers.Writer: only secrets eso created; with a
// property, only that field (and the secret when it was the last).
func (c *Client) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	if !c.v2 {
		return errKVv1Writes
	}
	exists, managed, version, err := c.state(ctx, remoteKey)
	if err != nil || !exists {
		return err
	}
	if !managed {
		return fmt.Errorf("%w: secret %q", providers.ErrNotManaged, remoteKey)
	}
	api, err := c.session.client(ctx)
	if err != nil {
		return err
	}
	if property != "" {
		current, err := c.data(ctx, remoteKey, "")
		if err != nil {
			return err
		}
		rest, empty, err := providers.DeleteProperty(current, property)
		if err != nil {
			return err
		}
		if !empty {
			var data map[string]any
			if err := json.Unmarshal(rest, &data); err != nil {
				return err
			}
			_, err = api.Logical().WriteWithContext(ctx, path.Join(c.mount, "data", remoteKey), map[string]any{
				"data": data, "options": map[string]any{"cas": version}})
			if err != nil {
				return fmt.Errorf("writing secret %q: %s", remoteKey, vaultMessage(err))
			}
			return nil
		}
	}
	if _, err := api.Logical().DeleteWithContext(ctx, path.Join(c.mount, "metadata", remoteKey)); err != nil {
		return fmt.Errorf("deleting secret %q: %s", remoteKey, vaultMessage(err))
	}
	return nil
}

// SecretExists implements providers.Writer.
func (c *Client) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	_, err := c.GetSecret(ctx, esv1.ExternalSecretDataRemoteRef{Key: remoteKey})
	if errors.Is(err, providers.ErrSecretNotFound) {
		return false, nil
	}
	return err == nil, err
}
