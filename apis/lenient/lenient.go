// Package lenient decodes eso's API objects so that one object that cannot
// be decoded does not fail the list of its kind. The API server accepts what
// the CRD schema allows; an object stored before a schema rule existed may
// still hold a value Go cannot decode (a duration like "banana"). Decoded
// strictly, it would fail every list of its kind and stop eso's informer for
// every namespace. Decoded leniently, it arrives with its metadata only and
// the decode error recorded, for its controller to report on it alone.
package lenient

import (
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// annotationDecodeError carries the decode error on the in-memory object
// only: eso never writes it back (controllers patch status, never the
// object, from such an object).
const annotationDecodeError = "eso.external-secrets.io/decode-error"

// maxErrorLength bounds the recorded error: it names a field and a value.
const maxErrorLength = 256

// Decode unmarshals data into plain, the kind's fields without its own
// UnmarshalJSON. When that fails it decodes the object without its spec
// (keeping metadata and status) or, failing that too, only its type and
// object metadata, and records the error on the object. Only metadata that
// cannot be decoded fails Decode.
func Decode(data []byte, plain any, reset func(), tm *metav1.TypeMeta, om *metav1.ObjectMeta) error {
	err := json.Unmarshal(data, plain)
	if err == nil {
		return nil
	}
	reset()
	if withoutSpec(data, plain) != nil {
		reset()
		var meta struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta `json:"metadata"`
		}
		if merr := json.Unmarshal(data, &meta); merr != nil {
			return err
		}
		*tm, *om = meta.TypeMeta, meta.Metadata
	}
	if om.Annotations == nil {
		om.Annotations = map[string]string{}
	}
	msg := err.Error()
	if len(msg) > maxErrorLength {
		msg = msg[:maxErrorLength] + "…"
	}
	om.Annotations[annotationDecodeError] = msg
	return nil
}

// withoutSpec decodes data without its spec into plain.
func withoutSpec(data []byte, plain any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	delete(fields, "spec")
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	return json.Unmarshal(rest, plain)
}

// ErrUndecodable: an object that could be decoded only leniently.
var ErrUndecodable = errors.New("the object cannot be decoded")

// Error is why obj could be decoded only leniently (wrapping
// ErrUndecodable), or nil.
func Error(obj metav1.Object) error {
	msg, ok := obj.GetAnnotations()[annotationDecodeError]
	if !ok {
		return nil
	}
	return fmt.Errorf("%w (%s): fix or recreate it", ErrUndecodable, msg)
}
