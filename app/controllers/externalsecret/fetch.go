package externalsecret

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/app/stores"
	"github.com/eso-dev/eso/providers/plugin"
)

// fetchResult is what the provider returned for an ExternalSecret.
type fetchResult struct {
	data map[string][]byte
	// gone reports the references whose remote secret does not exist (a
	// missing property does not count: the secret is still there). Whether
	// that is an error depends on the deletion policy.
	gone error
}

// fetch reads every entry of the ExternalSecret through its store, taking
// the values of generator entries from generated (by dataFrom index). dataFrom
// entries are merged in order and data entries win over them. A reference the
// provider does not have is recorded in gone, not fatal, so the caller can
// apply the deletion policy; any other error stops the fetch.
// Every value fetched is charged to b, the sync's budget, as it arrives.
func fetch(ctx context.Context, srcs *sources, b *secrettemplate.Budget, es *esv1.ExternalSecret, generated map[int]map[string][]byte) (fetchResult, error) {
	res := fetchResult{data: map[string][]byte{}}
	var notFound []error
	for i, df := range es.Spec.DataFrom {
		fields, err := fetchDataFrom(ctx, srcs, b, es, &df, generated[i])
		if err != nil {
			err = fmt.Errorf("dataFrom[%d]: %w", i, err)
			if df.SourceRef == nil || df.SourceRef.GeneratorRef == nil {
				err = srcs.inStore(es, stores.DataFromRef(df), err)
			}
		}
		if isGone(err) {
			notFound = append(notFound, err)
			continue
		}
		if err != nil {
			return res, err
		}
		for k, v := range fields {
			res.data[k] = v
		}
	}
	for i, d := range es.Spec.Data {
		c, err := srcs.client(ctx, es, stores.DataRef(d))
		if err != nil {
			return res, err
		}
		value, err := c.GetSecret(ctx, d.RemoteRef)
		if err == nil {
			err = b.Read(fmt.Sprintf("data[%d] (%s)", i, d.SecretKey), int64(len(value)))
		}
		if isGone(err) {
			notFound = append(notFound, srcs.inStore(es, stores.DataRef(d), fmt.Errorf("data[%d] (%s): %w", i, d.SecretKey, err)))
			continue
		}
		if err != nil {
			return res, srcs.inStore(es, stores.DataRef(d), fmt.Errorf("data[%d] (%s, key %q): %w", i, d.SecretKey, d.RemoteRef.Key, err))
		}
		if value, err = finishValue(d.RemoteRef.DecodingStrategy, d.RemoteRef.NullBytePolicy, d.SecretKey, value); err != nil {
			return res, fmt.Errorf("data[%d]: %w", i, err)
		}
		res.data[d.SecretKey] = value
	}
	res.gone = errors.Join(notFound...)
	return res, nil
}

// fetchDataFrom reads one dataFrom entry (extract or find; a generator
// entry's values come generated), then converts, rewrites and decodes its
// keys and values.
func fetchDataFrom(ctx context.Context, srcs *sources, b *secrettemplate.Budget, es *esv1.ExternalSecret, df *esv1.ExternalSecretDataFromRemoteRef, generated map[string][]byte) (map[string][]byte, error) {
	var (
		fields     map[string][]byte
		conversion esv1.ConversionStrategy
		decoding   esv1.DecodingStrategy
		nullBytes  esv1.NullBytePolicy
	)
	generatedEntry := df.SourceRef != nil && df.SourceRef.GeneratorRef != nil
	var c plugin.SecretsClient
	var err error
	if !generatedEntry {
		if c, err = srcs.client(ctx, es, stores.DataFromRef(*df)); err != nil {
			return nil, err
		}
	}
	switch {
	case generatedEntry:
		fields = maps.Clone(generated) // no conversion or decoding, as upstream
	case df.Extract != nil:
		fields, err = c.GetSecretMap(ctx, *df.Extract)
		if err != nil {
			return nil, fmt.Errorf("extract (key %q): %w", df.Extract.Key, err)
		}
		conversion, decoding, nullBytes = df.Extract.ConversionStrategy, df.Extract.DecodingStrategy, df.Extract.NullBytePolicy
	case df.Find != nil:
		fields, err = c.GetAllSecrets(ctx, *df.Find)
		if err != nil {
			return nil, fmt.Errorf("find: %w", err)
		}
		conversion, decoding, nullBytes = df.Find.ConversionStrategy, df.Find.DecodingStrategy, df.Find.NullBytePolicy
	default:
		return nil, errors.New("entry has neither extract, find nor a generator")
	}
	if err := b.Read("the values fetched", secrettemplate.DataSize(fields)); err != nil {
		return nil, err
	}
	// As upstream: rewrites first; key conversion only when there are none.
	if len(df.Rewrite) > 0 {
		fields, err = rewrite(b, df.Rewrite, fields)
	} else {
		if conversion == esv1.ConversionUnicode {
			// "_Uxxxx_" for each character a key may not hold: ten
			// bytes at most for one, charged before.
			var size int64
			for k := range fields {
				size += 10 * int64(len(k))
			}
			if err := b.Produce("conversionStrategy Unicode", size); err != nil {
				return nil, err
			}
		}
		fields, err = convertKeys(conversion, fields)
	}
	if err != nil {
		return nil, err
	}
	// Values in key order, so that with several bad values the same error is
	// reported each time (no status churn).
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if fields[k], err = finishValue(decoding, nullBytes, k, fields[k]); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

// isGone: the remote secret itself does not exist.
func isGone(err error) bool {
	return errors.Is(err, plugin.ErrSecretNotFound) && !errors.Is(err, plugin.ErrPropertyNotFound)
}
