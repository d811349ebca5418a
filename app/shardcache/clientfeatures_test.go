package shardcache

import (
	"os"
	"testing"

	"k8s.io/client-go/features"
)

func TestInformersStartWithPagedLists(t *testing.T) {
	if _, ok := features.FeatureGates().(pagedListsByDefault); !ok {
		t.Fatalf("client-go's feature gates are %T, not eso's", features.FeatureGates())
	}
	t.Setenv(streamingListsEnv, "") // restored after the test
	if err := os.Unsetenv(streamingListsEnv); err != nil {
		t.Fatal(err)
	}
	gates := pagedListsByDefault{alwaysOn{}}
	if gates.Enabled(features.WatchListClient) {
		t.Error("informers would start with streaming lists")
	}
	if !gates.Enabled(features.InOrderInformers) {
		t.Error("the other client-go features are no longer answered by the gates wrapped")
	}
}

func TestStreamingListsFollowTheOperator(t *testing.T) {
	t.Setenv(streamingListsEnv, "true")
	if !(pagedListsByDefault{alwaysOn{}}).Enabled(features.WatchListClient) {
		t.Error("an operator's " + streamingListsEnv + " is ignored")
	}
}

// alwaysOn stands for client-go's gates with every feature on.
type alwaysOn struct{}

func (alwaysOn) Enabled(features.Feature) bool { return true }
