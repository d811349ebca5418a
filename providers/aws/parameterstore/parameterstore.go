// Package parameterstore is the provider for AWS Systems Manager Parameter
// Store (kind AWSParameterStore), compiled in with the aws build tag.
package parameterstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/aws/awsauth"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Kind is the configuration kind this provider serves.
const Kind = "AWSParameterStore"

// Registration describes the provider to the registry.
var Registration = awsauth.Definition("aws-parameterstore", Kind,
	func(cfg *provv1.AWSParameterStore) *provv1.AWSSpec { return &cfg.Spec },
	connect,
).Registration()

func connect(session aws.Config, spec *provv1.AWSSpec) plugin.SecretsClient {
	c := &Client{api: ssm.NewFromConfig(session), prefix: spec.Prefix, account: session.Region + "|" + spec.Endpoint}
	c.JSONValues = kit.JSONValues{Value: c.value, Metadata: c.tags}
	return c
}

// API is the part of the SSM API the client uses.
type API interface {
	GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
	GetParameters(context.Context, *ssm.GetParametersInput, ...func(*ssm.Options)) (*ssm.GetParametersOutput, error)
	DescribeParameters(context.Context, *ssm.DescribeParametersInput, ...func(*ssm.Options)) (*ssm.DescribeParametersOutput, error)
	ListTagsForResource(context.Context, *ssm.ListTagsForResourceInput, ...func(*ssm.Options)) (*ssm.ListTagsForResourceOutput, error)
}

// Client reads parameters of one AWS account and region.
type Client struct {
	// JSONValues serves GetSecret and GetSecretMap from value and tags.
	kit.JSONValues
	api    API
	prefix string
	// account identifies the region and endpoint written to, for writeLocks.
	account string
}

// getBatch is GetParameters' limit.
const getBatch = 10

// GetAllSecrets implements plugin.SecretsClient: DescribeParameters
// narrowed by path (recursive) and tags on the server, the name regexp here,
// then the decrypted values in batches of 10. Keys are parameter names
// without the configuration's prefix.
func (c *Client) GetAllSecrets(ctx context.Context, find esv1.ExternalSecretFind) (map[string][]byte, error) {
	var filters []ssmtypes.ParameterStringFilter
	prefix := c.prefix + ptrValue(find.Path)
	switch {
	case strings.HasPrefix(prefix, "/"): // a hierarchy: the server filters by path
		filters = append(filters, ssmtypes.ParameterStringFilter{Key: aws.String("Path"), Option: aws.String("Recursive"), Values: []string{"/" + strings.Trim(prefix, "/")}})
	case prefix != "":
		filters = append(filters, ssmtypes.ParameterStringFilter{Key: aws.String("Name"), Option: aws.String("BeginsWith"), Values: []string{prefix}})
	}
	for k, v := range find.Tags {
		filters = append(filters, ssmtypes.ParameterStringFilter{Key: aws.String("tag:" + k), Values: []string{v}})
	}
	pages := ssm.NewDescribeParametersPaginator(c.api, &ssm.DescribeParametersInput{ParameterFilters: filters})
	return kit.BatchFind{Prefix: c.prefix, Batch: getBatch,
		NextPage: func(ctx context.Context) (int, []string, bool, error) {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return 0, nil, false, awsauth.APIError("listing parameters", err)
			}
			var names []string
			for _, p := range page.Parameters {
				if name := aws.ToString(p.Name); strings.HasPrefix(name, prefix) || strings.HasPrefix(name, "/"+strings.TrimPrefix(prefix, "/")) {
					names = append(names, name)
				}
			}
			return len(page.Parameters), names, pages.HasMorePages(), nil
		},
		Read: c.readBatch,
	}.Run(ctx, find)
}

// readBatch reads parameters by name, SecureStrings decrypted.
func (c *Client) readBatch(ctx context.Context, names []string) (map[string][]byte, error) {
	res, err := c.api.GetParameters(ctx, &ssm.GetParametersInput{Names: names, WithDecryption: aws.Bool(true)})
	if err != nil {
		return nil, awsauth.APIError("reading found parameters", err)
	}
	out := make(map[string][]byte, len(res.Parameters))
	for _, p := range res.Parameters {
		out[aws.ToString(p.Name)] = []byte(aws.ToString(p.Value))
	}
	return out, nil
}

func ptrValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// value reads a parameter, SecureStrings decrypted; a version is a parameter
// version number or label.
func (c *Client) value(ctx context.Context, key, version string) ([]byte, error) {
	name := c.prefix + key
	if version != "" {
		name += ":" + version // a version number or a label
	}
	out, err := c.api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
	if err != nil {
		return nil, notFound(err, key, version)
	}
	return []byte(aws.ToString(out.Parameter.Value)), nil
}

// tags are a parameter's tags, for metadataPolicy Fetch.
func (c *Client) tags(ctx context.Context, key string) (map[string]string, error) {
	out, err := c.api.ListTagsForResource(ctx, &ssm.ListTagsForResourceInput{
		ResourceType: ssmtypes.ResourceTypeForTaggingParameter, ResourceId: aws.String(c.prefix + key)})
	if err != nil {
		return nil, notFound(err, key, "")
	}
	tags := make(map[string]string, len(out.TagList))
	for _, t := range out.TagList {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
}

func notFound(err error, key, version string) error {
	var pnf *ssmtypes.ParameterNotFound
	var vnf *ssmtypes.ParameterVersionNotFound
	var inv *ssmtypes.InvalidResourceId
	if errors.As(err, &pnf) || errors.As(err, &vnf) || errors.As(err, &inv) {
		return fmt.Errorf("%w: parameter %q version %q", plugin.ErrSecretNotFound, key, version)
	}
	return awsauth.APIError(fmt.Sprintf("reading parameter %q", key), err)
}

// CheckAuth implements plugin.AuthChecker with the cheapest list call.
func (c *Client) CheckAuth(ctx context.Context) error {
	return awsauth.CheckAuth(ctx, func(ctx context.Context) error {
		_, err := c.api.DescribeParameters(ctx, &ssm.DescribeParametersInput{MaxResults: aws.Int32(1)})
		return err
	})
}

// Capabilities implements plugin.SecretsClient.
func (c *Client) Capabilities() plugin.Capabilities { return plugin.ReadWrite }

// Close implements plugin.SecretsClient.
func (c *Client) Close(context.Context) error { return nil }
