package shardcache

import (
	"os"

	"k8s.io/client-go/features"
)

// streamingListsEnv is client-go's own switch for streaming lists; when an
// operator sets it, eso follows it.
const streamingListsEnv = "KUBE_FEATURE_" + string(features.WatchListClient)

// client-go turns streaming lists (WatchListClient) on by default. A sharded
// replica starts one informer per kind and owned namespace, a thousand or
// more at once; with each of them starting as a streamed list, a v1.34 API
// server grew past 23 GiB and was OOM-killed in the 100,000 ExternalSecret
// benchmark, where paged Lists kept it under 12.5 GiB. So every informer of
// a process linking this package (eso's cluster-wide ones too) starts with
// paged Lists, which the start bound counts, unless the operator asks
// otherwise. The setting is process-wide, as client-go's feature gates are.
func init() {
	features.ReplaceFeatureGates(pagedListsByDefault{features.FeatureGates()})
}

// pagedListsByDefault answers client-go's feature questions as the gates it
// wraps do, except streaming lists, which are off unless streamingListsEnv
// says otherwise.
type pagedListsByDefault struct{ features.Gates }

func (g pagedListsByDefault) Enabled(f features.Feature) bool {
	if f == features.WatchListClient {
		if _, set := os.LookupEnv(streamingListsEnv); !set {
			return false
		}
	}
	return g.Gates.Enabled(f)
}
