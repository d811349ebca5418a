package stores

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/eso-dev/eso/app/manager"
)

// namespaceJanitor drops the clients cached for a namespace's credentials
// once the namespace is being deleted, so a ClusterSecretStore with
// ManifestNamespace used by many short-lived namespaces does not keep a
// client (and a login) for each of them.
type namespaceJanitor struct {
	reader  client.Reader
	clients *ClientCache
}

func (j *namespaceJanitor) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ns corev1.Namespace
	err := j.reader.Get(ctx, req.NamespacedName, &ns)
	if apierrors.IsNotFound(err) || (err == nil && !ns.DeletionTimestamp.IsZero()) {
		j.clients.ForgetScope(ctx, req.Name)
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// namespaceGoing passes the events of a namespace starting or finishing deletion.
var namespaceGoing = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
}

func setupJanitor(mgr ctrl.Manager, clients *ClientCache) error {
	return ctrl.NewControllerManagedBy(mgr).Named("client-janitor").
		For(&corev1.Namespace{}, builder.WithPredicates(namespaceGoing)).
		WithOptions(manager.LocalControllerOptions(mgr, controller.Options{})).
		Complete(&namespaceJanitor{reader: mgr.GetClient(), clients: clients})
}
