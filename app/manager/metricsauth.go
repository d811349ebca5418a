package manager

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Scrapes are authorized as the API server authorizes its own /metrics: the
// caller's bearer token is checked with a TokenReview, and a
// SubjectAccessReview asks whether that user may get the non-resource URL.
// This is what controller-runtime's metrics filter does; eso does it with the
// API clients it already links instead of importing k8s.io/apiserver for it
// (about 8 MiB of binary).

// Verdicts are cached per token so that a scrape every few seconds costs the
// API server two reviews a minute, not two per scrape.
const (
	metricsAllowTTL   = time.Minute
	metricsDenyTTL    = 10 * time.Second
	metricsMaxCached  = 1024
	metricsReviewTime = 10 * time.Second
)

// authorizeMetrics is a metricsserver FilterProvider.
func authorizeMetrics(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	scheme := runtime.NewScheme()
	if err := authnv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := authzv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme, HTTPClient: httpClient})
	if err != nil {
		return nil, err
	}
	a := &metricsAuthorizer{client: c, verdicts: map[[32]byte]verdict{}, now: time.Now}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
			if !ok || token == "" {
				http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
				return
			}
			code, err := a.authorize(req.Context(), token, strings.ToLower(req.Method), req.URL.Path)
			if err != nil {
				log.Error(err, "authorizing a metrics request")
			}
			if code != http.StatusOK {
				http.Error(w, http.StatusText(code), code)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}, nil
}

type verdict struct {
	code    int
	expires time.Time
}

type metricsAuthorizer struct {
	client client.Client
	now    func() time.Time

	mu       sync.Mutex
	verdicts map[[32]byte]verdict
}

// authorize answers 200, 401 or 403 (or 500 when the API server cannot
// tell, which is not cached).
func (a *metricsAuthorizer) authorize(ctx context.Context, token, verb, path string) (int, error) {
	key := sha256.Sum256([]byte(verb + " " + path + " " + token))
	a.mu.Lock()
	v, ok := a.verdicts[key]
	a.mu.Unlock()
	if ok && a.now().Before(v.expires) {
		return v.code, nil
	}
	ctx, cancel := context.WithTimeout(ctx, metricsReviewTime)
	defer cancel()
	code, err := a.review(ctx, token, verb, path)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	ttl := metricsDenyTTL
	if code == http.StatusOK {
		ttl = metricsAllowTTL
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.verdicts) >= metricsMaxCached {
		clear(a.verdicts) // a bound, not an LRU: scrapers are few
	}
	a.verdicts[key] = verdict{code: code, expires: a.now().Add(ttl)}
	return code, nil
}

func (a *metricsAuthorizer) review(ctx context.Context, token, verb, path string) (int, error) {
	tr := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}
	if err := a.client.Create(ctx, tr); err != nil {
		return 0, err
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	user := tr.Status.User
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: verb},
	}}
	if err := a.client.Create(ctx, sar); err != nil {
		return 0, err
	}
	if !sar.Status.Allowed {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}
