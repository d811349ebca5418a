// Package secretsmanager is the provider for AWS Secrets Manager (kind
// AWSSecretManager), compiled in with the aws build tag.
package secretsmanager

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	sm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awsauth"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this provider serves.
const Kind = "AWSSecretManager"

// Registration describes the provider to the registry.
var Registration = awsauth.Definition("aws-secretsmanager", Kind,
	func(cfg *provv1.AWSSecretManager) *provv1.AWSSpec { return &cfg.Spec },
	connect,
).Registration()

func connect(session aws.Config, spec *provv1.AWSSpec) plugin.SecretsClient {
	c := &Client{api: sm.NewFromConfig(session), prefix: spec.Prefix, account: session.Region + "|" + spec.Endpoint}
	c.JSONValues = kit.JSONValues{Value: c.value, Metadata: c.tags}
	return c
}

// API is the part of the Secrets Manager API the client uses.
type API interface {
	GetSecretValue(context.Context, *sm.GetSecretValueInput, ...func(*sm.Options)) (*sm.GetSecretValueOutput, error)
	BatchGetSecretValue(context.Context, *sm.BatchGetSecretValueInput, ...func(*sm.Options)) (*sm.BatchGetSecretValueOutput, error)
	DescribeSecret(context.Context, *sm.DescribeSecretInput, ...func(*sm.Options)) (*sm.DescribeSecretOutput, error)
	ListSecrets(context.Context, *sm.ListSecretsInput, ...func(*sm.Options)) (*sm.ListSecretsOutput, error)
}

// Client reads secrets of one AWS account and region.
type Client struct {
	// JSONValues serves GetSecret and GetSecretMap from value and tags.
	kit.JSONValues
	api    API
	prefix string
	// account identifies the region and endpoint written to, for writeLocks.
	account string
}

// batchSize is BatchGetSecretValue's limit.
const batchSize = 20

// GetAllSecrets implements plugin.SecretsClient: ListSecrets narrowed by
// path (name prefix) and tags on the server, the name regexp here, then the
// values in batches of 20.
func (c *Client) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	var filters []smtypes.Filter
	prefix := c.prefix
	if find.Path != nil {
		prefix += *find.Path
	}
	if prefix != "" {
		filters = append(filters, smtypes.Filter{Key: smtypes.FilterNameStringTypeName, Values: []string{prefix}})
	}
	for k, v := range find.Tags {
		filters = append(filters,
			smtypes.Filter{Key: smtypes.FilterNameStringTypeTagKey, Values: []string{k}},
			smtypes.Filter{Key: smtypes.FilterNameStringTypeTagValue, Values: []string{v}})
	}
	pages := sm.NewListSecretsPaginator(c.api, &sm.ListSecretsInput{Filters: filters})
	return kit.BatchFind{Prefix: c.prefix, Batch: batchSize,
		NextPage: func(ctx context.Context) (int, []string, bool, error) {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return 0, nil, false, apiError("listing secrets", err)
			}
			var names []string
			for _, s := range page.SecretList {
				// The filters match prefixes and keys/values loosely; be exact.
				if name := aws.ToString(s.Name); strings.HasPrefix(name, prefix) && kit.HasTags(tagMap(s.Tags), find.Tags) {
					names = append(names, name)
				}
			}
			return len(page.SecretList), names, pages.HasMorePages(), nil
		},
		Read: c.readBatch,
	}.Run(ctx, find)
}

// readBatch reads the values of secrets by name.
func (c *Client) readBatch(ctx context.Context, names []string) (map[string][]byte, error) {
	res, err := c.api.BatchGetSecretValue(ctx, &sm.BatchGetSecretValueInput{SecretIdList: names})
	if err != nil {
		return nil, apiError("reading found secrets", err)
	}
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		return nil, fmt.Errorf("reading secret %q: %s", aws.ToString(e.SecretId), aws.ToString(e.ErrorCode))
	}
	out := make(map[string][]byte, len(res.SecretValues))
	for _, v := range res.SecretValues {
		out[aws.ToString(v.Name)] = valueOf(v.SecretString, v.SecretBinary)
	}
	return out, nil
}

// tagMap is a secret's tags as a map.
func tagMap(tags []smtypes.Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

// value reads a secret's value: version "uuid/<id>" selects a version id,
// any other version a staging label (default AWSCURRENT).
func (c *Client) value(ctx context.Context, key, version string) ([]byte, error) {
	in := &sm.GetSecretValueInput{SecretId: aws.String(c.prefix + key)}
	switch {
	case strings.HasPrefix(version, "uuid/"):
		in.VersionId = aws.String(strings.TrimPrefix(version, "uuid/"))
	case version != "":
		in.VersionStage = aws.String(version)
	}
	out, err := c.api.GetSecretValue(ctx, in)
	if err != nil {
		return nil, notFound(err, key, version)
	}
	return valueOf(out.SecretString, out.SecretBinary), nil
}

// tags are a secret's tags, for metadataPolicy Fetch.
func (c *Client) tags(ctx context.Context, key string) (map[string]string, error) {
	out, err := c.api.DescribeSecret(ctx, &sm.DescribeSecretInput{SecretId: aws.String(c.prefix + key)})
	if err != nil {
		return nil, notFound(err, key, "")
	}
	return tagMap(out.Tags), nil
}

func valueOf(s *string, b []byte) []byte {
	if s != nil {
		return []byte(*s)
	}
	return b
}

func notFound(err error, key, version string) error {
	var nf *smtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: secret %q version %q", plugin.ErrSecretNotFound, key, version)
	}
	return apiError(fmt.Sprintf("reading secret %q", key), err)
}

var apiError = awsauth.APIError

// CheckAuth implements plugin.AuthChecker with the cheapest list call.
func (c *Client) CheckAuth(ctx context.Context) error {
	return awsauth.CheckAuth(ctx, func(ctx context.Context) error {
		_, err := c.api.ListSecrets(ctx, &sm.ListSecretsInput{MaxResults: aws.Int32(1)})
		return err
	})
}

// Capabilities implements plugin.SecretsClient.
func (c *Client) Capabilities() plugin.Capabilities { return plugin.ReadWrite }

// Close implements plugin.SecretsClient.
func (c *Client) Close(context.Context) error { return nil }
