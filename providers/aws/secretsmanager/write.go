package secretsmanager

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/aws/awsauth"
	"github.com/eso-dev/eso/providers/kit"
)

// WriteAPI is the part of the Secrets Manager API writes use.
type WriteAPI interface {
	CreateSecret(context.Context, *sm.CreateSecretInput, ...func(*sm.Options)) (*sm.CreateSecretOutput, error)
	PutSecretValue(context.Context, *sm.PutSecretValueInput, ...func(*sm.Options)) (*sm.PutSecretValueOutput, error)
	DeleteSecret(context.Context, *sm.DeleteSecretInput, ...func(*sm.Options)) (*sm.DeleteSecretOutput, error)
	RestoreSecret(context.Context, *sm.RestoreSecretInput, ...func(*sm.Options)) (*sm.RestoreSecretOutput, error)
	TagResource(context.Context, *sm.TagResourceInput, ...func(*sm.Options)) (*sm.TagResourceOutput, error)
}

// managed reports whether the secret exists, whether eso created it, and
// whether it is scheduled for deletion (within its recovery window).
func (c *Client) managed(ctx context.Context, key string) (exists, managed, deleted bool, err error) {
	out, err := c.api.DescribeSecret(ctx, &sm.DescribeSecretInput{SecretId: aws.String(c.prefix + key)})
	var nf *smtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return false, false, false, nil
	}
	if err != nil {
		return false, false, false, apiError(fmt.Sprintf("describing secret %q", key), err)
	}
	if tagMap(out.Tags)[providers.ManagedByKey] == providers.ManagedByValue {
		return true, true, out.DeletedDate != nil, nil
	}
	return true, false, out.DeletedDate != nil, nil
}

// PushSecret implements providers.Writer: it creates the secret tagged as
// eso's, or updates one eso created; a property is merged into the JSON
// object the secret holds. Nothing is written when the value is unchanged.
func (c *Client) PushSecret(ctx context.Context, req providers.PushRequest) error {
	w, unlock, err := awsauth.BeginWrite[WriteAPI](c.api, c.lockKey(req.RemoteKey))
	if err != nil {
		return err
	}
	defer unlock()
	exists, managed, deleted, err := c.managed(ctx, req.RemoteKey)
	if err != nil {
		return err
	}
	if exists && !managed {
		if !req.Adopt {
			return fmt.Errorf("%w: secret %q (no %s=%s tag)", providers.ErrNotManaged, req.RemoteKey, providers.ManagedByKey, providers.ManagedByValue)
		}
		if _, err := w.TagResource(ctx, &sm.TagResourceInput{SecretId: aws.String(c.prefix + req.RemoteKey),
			Tags: []smtypes.Tag{{Key: aws.String(providers.ManagedByKey), Value: aws.String(providers.ManagedByValue)}}}); err != nil {
			return apiError(fmt.Sprintf("marking secret %q as eso's", req.RemoteKey), err)
		}
	}
	if deleted {
		// eso's secret, deleted but still recoverable: bring it back to update it.
		if _, err := w.RestoreSecret(ctx, &sm.RestoreSecretInput{SecretId: aws.String(c.prefix + req.RemoteKey)}); err != nil {
			return apiError(fmt.Sprintf("restoring secret %q", req.RemoteKey), err)
		}
	}
	value := req.Value
	var current []byte
	if exists {
		current, err = c.value(ctx, req.RemoteKey, "")
		if err != nil && !errors.Is(err, providers.ErrSecretNotFound) {
			return err
		}
	}
	if req.Property != "" {
		if value, err = providers.SetProperty(current, req.Property, req.Value); err != nil {
			return err
		}
	}
	if exists && string(current) == string(value) {
		return nil
	}
	name := aws.String(c.prefix + req.RemoteKey)
	if !exists {
		_, err = w.CreateSecret(ctx, &sm.CreateSecretInput{Name: name, SecretBinary: value,
			Tags: []smtypes.Tag{{Key: aws.String(providers.ManagedByKey), Value: aws.String(providers.ManagedByValue)}}})
	} else {
		_, err = w.PutSecretValue(ctx, &sm.PutSecretValueInput{SecretId: name, SecretBinary: value})
	}
	if err != nil {
		return apiError(fmt.Sprintf("writing secret %q", req.RemoteKey), err)
	}
	return nil
}

// DeleteSecret implements providers.Writer: only secrets eso created are
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

// SecretExists implements providers.Writer: a secret scheduled for deletion
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
