package externalsecret

import (
	"context"
	"errors"
	"fmt"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/providers"
)

// fetchResult is what the provider returned for an ExternalSecret.
type fetchResult struct {
	data map[string][]byte
	// missing counts references whose remote secret does not exist (a missing
	// property does not count: the secret is still there).
	missing int
	// total counts references asked for.
	total int
}

// allMissing: every referenced remote secret is gone.
func (f fetchResult) allMissing() bool { return f.total > 0 && f.missing == f.total }

// fetch reads every reference of the ExternalSecret. dataFrom entries are
// merged in order and data entries win over them. A reference the provider does
// not have is counted, not fatal, so the caller can apply the deletion policy;
// any other error stops the fetch.
func fetch(ctx context.Context, c providers.SecretsClient, es *esv1.ExternalSecret) (fetchResult, error) {
	res := fetchResult{data: map[string][]byte{}}
	var notFound []error
	for i, df := range es.Spec.DataFrom {
		if df.Extract == nil {
			continue
		}
		res.total++
		fields, err := c.GetSecretMap(ctx, *df.Extract)
		if isGone(err) {
			res.missing++
			notFound = append(notFound, fmt.Errorf("dataFrom[%d]: %w", i, err))
			continue
		}
		if err != nil {
			return res, fmt.Errorf("dataFrom[%d] (key %q): %w", i, df.Extract.Key, err)
		}
		for k, v := range fields {
			k = convertKey(df.Extract.ConversionStrategy, k)
			if v, err = finishValue(df.Extract, k, v); err != nil {
				return res, fmt.Errorf("dataFrom[%d]: %w", i, err)
			}
			res.data[k] = v
		}
	}
	for i, d := range es.Spec.Data {
		res.total++
		value, err := c.GetSecret(ctx, d.RemoteRef)
		if isGone(err) {
			res.missing++
			notFound = append(notFound, fmt.Errorf("data[%d] (%s): %w", i, d.SecretKey, err))
			continue
		}
		if err != nil {
			return res, fmt.Errorf("data[%d] (%s, key %q): %w", i, d.SecretKey, d.RemoteRef.Key, err)
		}
		if value, err = finishValue(&d.RemoteRef, d.SecretKey, value); err != nil {
			return res, fmt.Errorf("data[%d]: %w", i, err)
		}
		res.data[d.SecretKey] = value
	}
	return res, errors.Join(notFound...)
}

// isGone: the remote secret itself does not exist.
func isGone(err error) bool {
	return errors.Is(err, providers.ErrSecretNotFound) && !errors.Is(err, providers.ErrPropertyNotFound)
}
