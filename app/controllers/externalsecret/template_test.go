package externalsecret

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/eso-dev/eso/app/secrettemplate"
)

// TestTemplateSourceErrors: a missing templateFrom source waits for a change;
// an API server hiccup reading it is retried with backoff.
func TestTemplateSourceErrors(t *testing.T) {
	missing := templateSourceError("ConfigMap", "tpl", apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "tpl"))
	if !errors.Is(missing, secrettemplate.ErrTemplate) || retryable(missing) {
		t.Errorf("a missing source: %v (retryable %v)", missing, retryable(missing))
	}
	hiccup := templateSourceError("ConfigMap", "tpl", apierrors.NewTimeoutError("slow", 1))
	if errors.Is(hiccup, secrettemplate.ErrTemplate) || !retryable(hiccup) {
		t.Errorf("a timeout reading the source: %v (retryable %v)", hiccup, retryable(hiccup))
	}
}
