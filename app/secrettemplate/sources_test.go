package secrettemplate_test

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	"github.com/eso-dev/eso/app/outcomes"
	"github.com/eso-dev/eso/app/secrettemplate"
	"github.com/eso-dev/eso/providers/plugin"
)

// TestTemplateSourceErrors: a missing templateFrom source is a template
// error that names the source, so eso awaits it, and is looked for again
// every 30 s besides; an API server hiccup reading it is retried with
// backoff.
func TestTemplateSourceErrors(t *testing.T) {
	missing := secrettemplate.SourceErrorForTest("ConfigMap", "ns", "tpl", apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "tpl"))
	if out := outcomes.Of(missing); !errors.Is(missing, secrettemplate.ErrTemplate) || out.ExternalSecretReason != esv1.ReasonTemplateError || out.SyncRetry != outcomes.Recheck {
		t.Errorf("a missing source: %v (reason %s, retry %v)", missing, out.ExternalSecretReason, out.SyncRetry)
	}
	if obj, ok := plugin.AwaitedObject(missing); !ok || obj != (plugin.ObjectRef{Kind: "ConfigMap", Namespace: "ns", Name: "tpl"}) {
		t.Errorf("a missing source awaits %+v (%v), want ConfigMap ns/tpl", obj, ok)
	}
	hiccup := secrettemplate.SourceErrorForTest("ConfigMap", "ns", "tpl", apierrors.NewTimeoutError("slow", 1))
	if errors.Is(hiccup, secrettemplate.ErrTemplate) || outcomes.Of(hiccup).SyncRetry != outcomes.Backoff {
		t.Errorf("a timeout reading the source: %v (retry %v)", hiccup, outcomes.Of(hiccup).SyncRetry)
	}
}
