package parameterstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/eso-dev/eso/providers/aws/awsauth"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// WriteAPI is the part of the SSM API writes use.
type WriteAPI interface {
	PutParameter(context.Context, *ssm.PutParameterInput, ...func(*ssm.Options)) (*ssm.PutParameterOutput, error)
	DeleteParameter(context.Context, *ssm.DeleteParameterInput, ...func(*ssm.Options)) (*ssm.DeleteParameterOutput, error)
	AddTagsToResource(context.Context, *ssm.AddTagsToResourceInput, ...func(*ssm.Options)) (*ssm.AddTagsToResourceOutput, error)
}

// pushMetadata is what a push's metadata may set (upstream's
// PushSecretMetadata fields for Parameter Store that eso applies). The
// type, key, tier and description are written with the value: on creation,
// and with each change of the value.
type pushMetadata struct {
	// SecretType is SecureString (eso's default), String or StringList.
	SecretType  string            `json:"secretType,omitempty"`
	KMSKeyID    string            `json:"kmsKeyID,omitempty"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Tier        *struct {
		// Type is Standard or Advanced; Policies (Advanced only) is
		// Parameter Store's JSON array of parameter policies.
		Type     string          `json:"type,omitempty"`
		Policies json.RawMessage `json:"policies,omitempty"`
	} `json:"tier,omitempty"`
}

func decodeMetadata(raw []byte) (pushMetadata, error) {
	var md pushMetadata
	if err := kit.DecodePushMetadata(raw, &md); err != nil {
		return md, err
	}
	switch ssmtypes.ParameterType(md.SecretType) {
	case "", ssmtypes.ParameterTypeSecureString, ssmtypes.ParameterTypeString, ssmtypes.ParameterTypeStringList:
	default:
		return md, fmt.Errorf("%w: metadata secretType %q (want SecureString, String or StringList)", plugin.ErrInvalidConfig, md.SecretType)
	}
	return md, nil
}

// apply puts the metadata's settings on a PutParameter request.
func (md pushMetadata) apply(in *ssm.PutParameterInput) {
	in.Type = ssmtypes.ParameterTypeSecureString
	if md.SecretType != "" {
		in.Type = ssmtypes.ParameterType(md.SecretType)
	}
	if md.KMSKeyID != "" && in.Type == ssmtypes.ParameterTypeSecureString {
		in.KeyId = aws.String(md.KMSKeyID)
	}
	if md.Description != "" {
		in.Description = aws.String(md.Description)
	}
	if md.Tier != nil && md.Tier.Type != "" {
		in.Tier = ssmtypes.ParameterTier(md.Tier.Type)
		if in.Tier == ssmtypes.ParameterTierAdvanced && len(md.Tier.Policies) > 0 {
			in.Policies = aws.String(string(md.Tier.Policies))
		}
	}
}

// managed reports whether the parameter exists and whether eso created it.
func (c *Client) managed(ctx context.Context, key string) (exists, managed bool, err error) {
	tags, exists, err := c.currentTags(ctx, key)
	return exists, tags[plugin.ManagedByKey] == plugin.ManagedByValue, err
}

// currentTags are the parameter's tags (c.tags), and whether it exists.
func (c *Client) currentTags(ctx context.Context, key string) (map[string]string, bool, error) {
	tags, err := c.tags(ctx, key)
	if errors.Is(err, plugin.ErrSecretNotFound) {
		return nil, false, nil
	}
	return tags, err == nil, err
}

// PushSecret implements plugin.Writer: SecureString parameters, created
// tagged as eso's; only those are updated. Unchanged values are not rewritten.
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
	have, exists, err := c.currentTags(ctx, req.RemoteKey)
	if err != nil {
		return err
	}
	if exists && have[plugin.ManagedByKey] != plugin.ManagedByValue {
		if !req.Adopt {
			return fmt.Errorf("%w: parameter %q (no %s=%s tag)", plugin.ErrNotManaged, req.RemoteKey, plugin.ManagedByKey, plugin.ManagedByValue)
		}
		if _, err := w.AddTagsToResource(ctx, &ssm.AddTagsToResourceInput{ResourceType: ssmtypes.ResourceTypeForTaggingParameter,
			ResourceId: aws.String(c.prefix + req.RemoteKey),
			Tags:       []ssmtypes.Tag{{Key: aws.String(plugin.ManagedByKey), Value: aws.String(plugin.ManagedByValue)}}}); err != nil {
			return awsauth.APIError(fmt.Sprintf("marking parameter %q as eso's", req.RemoteKey), err)
		}
	}
	value := req.Value
	var current []byte
	if exists {
		if current, err = c.value(ctx, req.RemoteKey, ""); err != nil && !errors.Is(err, plugin.ErrSecretNotFound) {
			return err
		}
	}
	if req.Property != "" {
		if value, err = kit.SetProperty(current, req.Property, req.Value); err != nil {
			return err
		}
	}
	if exists {
		if err := c.tag(ctx, w, req.RemoteKey, have, md.Tags); err != nil {
			return err
		}
	}
	if exists && string(current) == string(value) {
		return nil
	}
	in := &ssm.PutParameterInput{Name: aws.String(c.prefix + req.RemoteKey), Value: aws.String(string(value)), Overwrite: aws.Bool(exists)}
	md.apply(in)
	if !exists {
		// Created and tagged in one call: no window in which eso's own
		// parameter looks unmanaged.
		in.Tags = []ssmtypes.Tag{{Key: aws.String(plugin.ManagedByKey), Value: aws.String(plugin.ManagedByValue)}}
		for k, v := range md.Tags {
			in.Tags = append(in.Tags, ssmtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
	}
	if _, err := w.PutParameter(ctx, in); err != nil {
		return awsauth.APIError(fmt.Sprintf("writing parameter %q", req.RemoteKey), err)
	}
	return nil
}

// tag adds the metadata's tags the parameter lacks (or holds otherwise)
// among those it has.
func (c *Client) tag(ctx context.Context, w WriteAPI, key string, have, want map[string]string) error {
	var missing []ssmtypes.Tag
	for k, v := range want {
		if have[k] != v {
			missing = append(missing, ssmtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := w.AddTagsToResource(ctx, &ssm.AddTagsToResourceInput{ResourceType: ssmtypes.ResourceTypeForTaggingParameter,
		ResourceId: aws.String(c.prefix + key), Tags: missing}); err != nil {
		return awsauth.APIError(fmt.Sprintf("tagging parameter %q", key), err)
	}
	return nil
}

// DeleteSecret implements plugin.Writer: only parameters eso created.
func (c *Client) DeleteSecret(ctx context.Context, remoteKey, property string) error {
	w, unlock, err := awsauth.BeginWrite[WriteAPI](c.api, c.lockKey(remoteKey))
	if err != nil {
		return err
	}
	defer unlock()
	name := aws.String(c.prefix + remoteKey)
	return kit.Deletion{
		Key: remoteKey, Property: property,
		State:   func(ctx context.Context) (bool, bool, error) { return c.managed(ctx, remoteKey) },
		Current: func(ctx context.Context) ([]byte, error) { return c.value(ctx, remoteKey, "") },
		Rewrite: func(ctx context.Context, rest []byte) error {
			if _, err := w.PutParameter(ctx, &ssm.PutParameterInput{Name: name, Value: aws.String(string(rest)),
				Type: ssmtypes.ParameterTypeSecureString, Overwrite: aws.Bool(true)}); err != nil {
				return awsauth.APIError(fmt.Sprintf("writing parameter %q", remoteKey), err)
			}
			return nil
		},
		Delete: func(ctx context.Context) error {
			if _, err := w.DeleteParameter(ctx, &ssm.DeleteParameterInput{Name: name}); err != nil {
				return awsauth.APIError(fmt.Sprintf("deleting parameter %q", remoteKey), err)
			}
			return nil
		},
	}.Run(ctx)
}

// SecretExists implements plugin.Writer.
func (c *Client) SecretExists(ctx context.Context, remoteKey string) (bool, error) {
	exists, _, err := c.managed(ctx, remoteKey)
	return exists, err
}

// lockKey names a remote secret for awsauth.BeginWrite: service, account
// and full name.
func (c *Client) lockKey(remoteKey string) string {
	return "parameterstore|" + c.account + "|" + c.prefix + remoteKey
}
