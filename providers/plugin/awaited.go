package plugin

import "errors"

// ObjectRef names a Kubernetes object of core/v1 (a Secret or ConfigMap)
// that a store, generator or ExternalSecret reads on its own behalf.
type ObjectRef struct {
	// Kind is "Secret" or "ConfigMap".
	Kind, Namespace, Name string
	// ResourceVersion is the version that was read and found wanting (a
	// key missing); empty when the object was not found. Only a different
	// version can fix the error.
	ResourceVersion string
}

// Awaiting marks err as fixed by the creation or a change of obj: a
// credentials Secret that does not exist yet, or lacks its key. Core keeps
// a watch on obj while something waits for it, so its arrival re-queues
// exactly the waiters, without eso caching Secrets it does not manage.
func Awaiting(obj ObjectRef, err error) error {
	return &awaitError{obj: obj, err: err}
}

// AwaitedObject is the object err was marked as Awaiting, if any.
func AwaitedObject(err error) (ObjectRef, bool) {
	var a *awaitError
	if errors.As(err, &a) {
		return a.obj, true
	}
	return ObjectRef{}, false
}

type awaitError struct {
	obj ObjectRef
	err error
}

func (e *awaitError) Error() string { return e.err.Error() }
func (e *awaitError) Unwrap() error { return e.err }
