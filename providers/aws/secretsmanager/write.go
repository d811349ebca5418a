package secretsmanager

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/eso-dev/eso/providers/aws/awsauth"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// WriteAPI is the part of the Secrets Manager API writes use.
type WriteAPI interface {
	CreateSecret(context.Context, *sm.CreateSecretInput, ...func(*sm.Options)) (*sm.CreateSecretOutput, error)
	PutSecretValue(context.Context, *sm.PutSecretValueInput, ...func(*sm.Options)) (*sm.PutSecretValueOutput, error)
	DeleteSecret(context.Context, *sm.DeleteSecretInput, ...func(*sm.Options)) (*sm.DeleteSecretOutput, error)
	RestoreSecret(context.Context, *sm.RestoreSecretInput, ...func(*sm.Options)) (*sm.RestoreSecretOutput, error)
	TagResource(context.Context, *sm.TagResourceInput, ...func(*sm.Options)) (*sm.TagResourceOutput, error)
	UpdateSecret(context.Context, *sm.UpdateSecretInput, ...func(*sm.Options)) (*sm.UpdateSecretOutput, error)
}

// pushMetadata is what a push's metadata may set (upstream's
// PushSecretMetadata fields for Secrets Manager that eso applies).
type pushMetadata struct {
	Tags        map[string]string `json:"tags,omitempty"`
	Description string            `json:"description,omitempty"`
	KMSKeyID    string            `json:"kmsKeyId,omitempty"`
	// SecretPushFormat is binary (the default: SecretBinary) or string
	// (SecretString, readable in the console).
	SecretPushFormat string `json:"secretPushFormat,omitempty"`
}

func decodeMetadata(raw []byte) (pushMetadata, error) {
	var md pushMetadata
	if err := kit.DecodePushMetadata(raw, &md); err != nil {
		return md, err
	}
	switch md.SecretPushFormat {
	case "", "binary", "string":
	default:
		return md, fmt.Errorf("%w: metadata secretPushFormat %q (want binary or string)", plugin.ErrInvalidConfig, md.SecretPushFormat)
	}
	return md, nil
}

// missingTags are the metadata's tags the secret lacks or holds otherwise.
func missingTags(want map[string]string, have []smtypes.Tag) []smtypes.Tag {
	current := tagMap(have)
	var out []smtypes.Tag
	for k, v := range want {
		if current[k] != v {
			out = append(out, smtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
	}
	return out
}

// managed reports whether the secret exists, whether eso created it, and
// whether it is scheduled for deletion (within its recovery window).
func (c *Client) managed(ctx context.Context, key string) (exists, managed, deleted bool, err error) {
	out, err := c.describe(ctx, key)
	if out == nil || err != nil {
		return false, false, false, err
	}
	return true, tagMap(out.Tags)[plugin.ManagedByKey] == plugin.ManagedByValue, out.DeletedDate != nil, nil
}

// describe reads the secret's description; nil when it does not exist.
func (c *Client) describe(ctx context.Context, key string) (*sm.DescribeSecretOutput, error) {
	out, err := c.api.DescribeSecret(ctx, &sm.DescribeSecretInput{SecretId: aws.String(c.prefix + key)})
	var nf *smtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, apiError(fmt.Sprintf("describing secret %q", key), err)
	}
	return out, nil
}

// PushSecret implements plugin.Writer: it creates the secret tagged as
// eso's, or updates one eso created; a property is merged into the JSON
// object the secret holds. Nothing is written when the value is unchanged.
func (c *Client) PushSecret(ctx context.Context, req plugin.PushRequest) error {
	md, err := decodeMetadata(req.Metadata)
	if err != nil {
		return err
	}
	w, unlock, err := awsauth.BeginWrite[WriteAPI](c.api, c.lockKey(req.RemoteKey))
	if err != nil {
		return err
	}
	defer unlock()
	desc, err := c.describe(ctx, req.RemoteKey)
	if err != nil {
		return err
	}
	exists := desc != nil
	name := aws.String(c.prefix + req.RemoteKey)
	if exists && tagMap(desc.Tags)[plugin.ManagedByKey] != plugin.ManagedByValue {
		if !req.Adopt {
			return fmt.Errorf("%w: secret %q (no %s=%s tag)", plugin.ErrNotManaged, req.RemoteKey, plugin.ManagedByKey, plugin.ManagedByValue)
		}
		if _, err := w.TagResource(ctx, &sm.TagResourceInput{SecretId: name,
			Tags: []smtypes.Tag{{Key: aws.String(plugin.ManagedByKey), Value: aws.String(plugin.ManagedByValue)}}}); err != nil {
			return apiError(fmt.Sprintf("marking secret %q as eso's", req.RemoteKey), err)
		}
	}
	if exists && desc.DeletedDate != nil {
		// eso's secret, deleted but still recoverable: bring it back to update it.
		if _, err := w.RestoreSecret(ctx, &sm.RestoreSecretInput{SecretId: name}); err != nil {
			return apiError(fmt.Sprintf("restoring secret %q", req.RemoteKey), err)
		}
	}
	value := req.Value
	var current []byte
	if exists {
		current, err = c.value(ctx, req.RemoteKey, "")
		if err != nil && !errors.Is(err, plugin.ErrSecretNotFound) {
			return err
		}
	}
	if req.Property != "" {
		if value, err = kit.SetProperty(current, req.Property, req.Value); err != nil {
			return err
		}
	}
	if !exists {
		return create(ctx, w, name, md, value, req.RemoteKey)
	}
	return update(ctx, w, name, desc, md, current, value, req.RemoteKey)
}

// create creates the secret, marked as eso's, with the metadata's tags,
// description and key.
func create(ctx context.Context, w WriteAPI, name *string, md pushMetadata, value []byte, remoteKey string) error {
	in := &sm.CreateSecretInput{Name: name, Tags: append(missingTags(md.Tags, nil),
		smtypes.Tag{Key: aws.String(plugin.ManagedByKey), Value: aws.String(plugin.ManagedByValue)})}
	setValue(&in.SecretString, &in.SecretBinary, md, value)
	if md.Description != "" {
		in.Description = aws.String(md.Description)
	}
	if md.KMSKeyID != "" {
		in.KmsKeyId = aws.String(md.KMSKeyID)
	}
	if _, err := w.CreateSecret(ctx, in); err != nil {
		return apiError(fmt.Sprintf("writing secret %q", remoteKey), err)
	}
	return nil
}

// update writes only what differs of an existing secret: the value, the
// tags, the description or key.
func update(ctx context.Context, w WriteAPI, name *string, desc *sm.DescribeSecretOutput, md pushMetadata, current, value []byte, remoteKey string) error {
	if tags := missingTags(md.Tags, desc.Tags); len(tags) > 0 {
		if _, err := w.TagResource(ctx, &sm.TagResourceInput{SecretId: name, Tags: tags}); err != nil {
			return apiError(fmt.Sprintf("tagging secret %q", remoteKey), err)
		}
	}
	if (md.Description != "" && md.Description != aws.ToString(desc.Description)) || (md.KMSKeyID != "" && md.KMSKeyID != aws.ToString(desc.KmsKeyId)) {
		in := &sm.UpdateSecretInput{SecretId: name}
		if md.Description != "" {
			in.Description = aws.String(md.Description)
		}
		if md.KMSKeyID != "" {
			in.KmsKeyId = aws.String(md.KMSKeyID)
		}
		if _, err := w.UpdateSecret(ctx, in); err != nil {
			return apiError(fmt.Sprintf("updating secret %q", remoteKey), err)
		}
	}
	if string(current) == string(value) {
		return nil
	}
	in := &sm.PutSecretValueInput{SecretId: name}
	setValue(&in.SecretString, &in.SecretBinary, md, value)
	if _, err := w.PutSecretValue(ctx, in); err != nil {
		return apiError(fmt.Sprintf("writing secret %q", remoteKey), err)
	}
	return nil
}

// setValue puts value in SecretString (secretPushFormat string) or
// SecretBinary.
func setValue(str **string, bin *[]byte, md pushMetadata, value []byte) {
	if md.SecretPushFormat == "string" {
		*str = aws.String(string(value))
		return
	}
	*bin = value
}

// DeleteSecret implements plugin.Writer: only secrets eso created are
// deleted; with a property, only that field goes, and the secret when it was
// the last.
func (c *Client) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	w, unlock, err := awsauth.BeginWrite[WriteAPI](c.api, c.lockKey(remoteKey))
	if err != nil {
		return err
	}
	defer unlock()
	name := aws.String(c.prefix + remoteKey)
	return kit.Deletion{
		Key: remoteKey, Property: property,
		State: func(ctx context.Context) (bool, bool, error) {
			exists, managed, deleted, err := c.managed(ctx, remoteKey)
			// Scheduled for deletion (within its recovery window) is deleted.
			return exists && !deleted, managed, err
		},
		Current: func(ctx context.Context) ([]byte, error) { return c.value(ctx, remoteKey, "") },
		Rewrite: func(ctx context.Context, rest []byte) error {
			_, err := w.PutSecretValue(ctx, &sm.PutSecretValueInput{SecretId: name, SecretBinary: rest})
			return apiErrorOrNil(remoteKey, err)
		},
		Delete: func(ctx context.Context) error {
			_, err := w.DeleteSecret(ctx, &sm.DeleteSecretInput{SecretId: name})
			return apiErrorOrNil(remoteKey, err)
		},
	}.Run(ctx)
}

// SecretExists implements plugin.Writer: a secret scheduled for deletion
// (within its recovery window) does not count.
func (c *Client) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	out, err := c.api.DescribeSecret(ctx, &sm.DescribeSecretInput{SecretId: aws.String(c.prefix + remoteKey)})
	var nf *smtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, apiError(fmt.Sprintf("describing secret %q", remoteKey), err)
	}
	return out.DeletedDate == nil, nil
}

func apiErrorOrNil(key string, err error) error {
	if err == nil {
		return nil
	}
	return apiError(fmt.Sprintf("writing secret %q", key), err)
}

// lockKey names a remote secret for awsauth.BeginWrite: service, account
// and full name.
func (c *Client) lockKey(remoteKey string) string {
	return "secretsmanager|" + c.account + "|" + c.prefix + remoteKey
}
