package awsauth

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"sigs.k8s.io/controller-runtime/pkg/client"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
	"github.com/eso-dev/eso/providers/kit"
	"github.com/eso-dev/eso/providers/plugin"
)

// Session is the one way every AWS provider and generator gets its AWS
// configuration: Config's credentials, and spec.Endpoint as the base
// endpoint of every service client made from it. Role assumption keeps its
// own STS client (stsEndpoint), built before the endpoint is set.
func Session(ctx context.Context, deps plugin.Deps, spec *provv1.AWSSpec, scope plugin.Scope) (aws.Config, error) {
	cfg, err := Config(ctx, deps, spec, scope)
	if err != nil {
		return aws.Config{}, err
	}
	if spec.Endpoint != "" {
		cfg.BaseEndpoint = aws.String(spec.Endpoint)
	}
	return cfg, nil
}

// GeneratorSpec is the connection part of an AWS generator's configuration
// in the providers' terms.
func GeneratorSpec(spec *genv1.AWSGeneratorSpec) *provv1.AWSSpec {
	auth := spec.Auth
	if auth != nil && auth.SecretRef != nil && auth.JWT != nil {
		// Both, as upstream's documentation writes them: upstream's
		// generators use secretRef.
		auth = &provv1.AWSAuth{SecretRef: auth.SecretRef}
	}
	return &provv1.AWSSpec{Region: spec.Region, Role: spec.Role, Auth: auth, Endpoint: spec.Endpoint, STSEndpoint: spec.STSEndpoint}
}

// Definition is the kit definition of a provider for one AWS service whose
// configuration kind C carries an AWSSpec: Validate resolves the
// credentials without calling AWS, and connect builds the service's client
// from the Session.
func Definition[C client.Object](name, kind string, spec func(C) *provv1.AWSSpec,
	connect func(session aws.Config, spec *provv1.AWSSpec) plugin.SecretsClient) plugin.Definition[C] {
	return plugin.Definition[C]{
		Name: name, Kind: kind,
		CheckCredentials: func(ctx context.Context, deps plugin.Deps, cfg C, scope plugin.Scope) error {
			_, err := Config(ctx, deps, spec(cfg), scope)
			return err
		},
		NewClient: func(ctx context.Context, deps plugin.Deps, cfg C, scope plugin.Scope) (plugin.SecretsClient, error) {
			session, err := Session(ctx, deps, spec(cfg), scope)
			if err != nil {
				return nil, err
			}
			return connect(session, spec(cfg)), nil
		},
	}
}

// writeLocks serialise this process's read-merge-write cycles on one remote
// secret: AWS has no check-and-set, so two property pushes must not overlap.
var writeLocks kit.KeyedMutex

// BeginWrite returns api's write side W, with the remote secret named by
// lockKey (service, account and name) locked for a read-merge-write cycle;
// the caller defers unlock. A client without a write side is
// ErrNotSupported.
func BeginWrite[W any](api any, lockKey string) (w W, unlock func(), err error) {
	w, ok := api.(W)
	if !ok {
		return w, func() {}, fmt.Errorf("%w: this client cannot write", plugin.ErrNotSupported)
	}
	return w, writeLocks.Lock(lockKey), nil
}
