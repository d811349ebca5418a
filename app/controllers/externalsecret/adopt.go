package externalsecret

import (
	"bufio"
	"crypto/sha3"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
)

// Secrets written by upstream ESO carry its own data-hash: SHA3-224 of the
// data as Go's %+v prints a map[string][]byte, in hex (56 characters; eso's
// own are 32). A cluster moving from upstream keeps its Secrets as they are:
// one whose data-hash is upstream's and matches its data has not drifted,
// and is adopted without a write while it holds what eso would write.

// upstreamDataHashLen tells an upstream data-hash from eso's without
// computing it.
const upstreamDataHashLen = 2 * 28

// upstreamDataHash is upstream's data-hash of data. It streams what
// fmt.Sprintf("%+v", data) prints into the hash rather than building it:
// the text is about four times the data.
func upstreamDataHash(data map[string][]byte) string {
	h := sha3.New224()
	w := bufio.NewWriter(h)
	w.WriteString("map[")
	for i, k := range slices.Sorted(maps.Keys(data)) {
		if i > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(k)
		w.WriteString(":[")
		var n [3]byte
		for j, b := range data[k] {
			if j > 0 {
				w.WriteByte(' ')
			}
			w.Write(strconv.AppendUint(n[:0], uint64(b), 10))
		}
		w.WriteByte(']')
	}
	w.WriteByte(']')
	w.Flush()
	return hex.EncodeToString(h.Sum(nil))
}

// hashMatches reports whether a data-hash annotation, eso's or upstream's,
// is the hash of data.
func hashMatches(annotation string, data map[string][]byte) bool {
	if len(annotation) == upstreamDataHashLen {
		return annotation == upstreamDataHash(data)
	}
	return annotation == dataHash(data)
}

// adoptedAsWritten reports whether target, a Secret upstream ESO wrote for
// this ExternalSecret, already holds what desired would make of it but for
// eso's own bookkeeping annotations (managed-by, data-hash, the applied
// metadata record), which it gets at the next change.
func adoptedAsWritten(es *esv1.ExternalSecret, target, desired *corev1.Secret) bool {
	if owner := metav1.GetControllerOf(target); owner == nil || owner.UID != es.UID {
		return false
	}
	if hash := target.Annotations[esv1.AnnotationDataHash]; len(hash) != upstreamDataHashLen || !hashMatches(hash, target.Data) {
		return false
	}
	probe := desired.DeepCopy()
	for _, k := range []string{esv1.AnnotationManagedBy, esv1.AnnotationDataHash, metadataAnnotation(es)} {
		if v, ok := target.Annotations[k]; ok {
			probe.Annotations[k] = v
		} else {
			delete(probe.Annotations, k)
		}
	}
	return equality.Semantic.DeepEqual(target, probe)
}
