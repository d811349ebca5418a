package explain

import (
	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	esv1alpha1 "github.com/eso-dev/eso/apis/externalsecrets/v1alpha1"
	ssv2 "github.com/eso-dev/eso/apis/secretstore/v2alpha1"
	"github.com/eso-dev/eso/app/outcomes"
)

// storeHints say what to change for each Ready reason a store gets (the
// store column of app/outcomes, and the controller's own checks).
var storeHints = map[string]string{
	ssv2.ReasonValid:                    "",
	ssv2.ReasonInvalidSpec:              "the stored spec does not decode: fix or recreate the store (kubectl apply it again)",
	ssv2.ReasonInvalidProviderConfig:    "fix the provider configuration the message names (a field, or a credentials Secret or key that is missing)",
	ssv2.ReasonProviderNotCompiledIn:    "this eso is built without the provider kind: fix spec.providerConfig.providerRef.kind, or run an eso built with it (`eso providers` lists what is in)",
	ssv2.ReasonProviderRefNotFound:      "create the provider configuration spec.providerConfig.providerRef names, or point providerRef at one that exists",
	ssv2.ReasonCrossNamespaceRefused:    "a SecretStore may only use a provider configuration (and client certificate) of its own namespace: move it there, or use a ClusterSecretStore",
	ssv2.ReasonRemoteProviderNotEnabled: "start eso with --provider-certificates-namespace (or --remote-providers-insecure in a lab) to reach provider processes, or clear spec.providerConfig.address to serve the provider in process",
	ssv2.ReasonInvalidConditions:        "fix spec.conditions: a namespaceSelector or namespaceRegexes entry does not parse",
	ssv2.ReasonValidationFailed:         "the provider or the API server could not be reached; eso retries with backoff. Check the provider's address and network reach if it lasts",
	ssv2.ReasonAuthenticationFailed:     "the provider refused the credentials: rotate or fix the credentials Secret (eso checks again within " + outcomes.RecheckInterval.String() + ")",
	ssv2.ReasonIncompatibleProvider:     "the provider process at spec.providerConfig.address does not serve this kind or protocol: upgrade it or point the address at a matching one",
}

// externalSecretHints say what to change for each reason of an
// ExternalSecret's Synced condition (the ExternalSecret column of
// app/outcomes, and the sync's own outcomes).
var externalSecretHints = map[string]string{
	esv1.ReasonSecretSynced:      "",
	esv1.ReasonSecretDeleted:     "",
	esv1.ReasonSecretMissing:     "creationPolicy Merge adds keys to a Secret that must exist: create the target Secret, or use creationPolicy CreateOrMerge",
	esv1.ReasonSecretSyncedError: "a provider call failed or its credentials were refused: see the message; eso retries with backoff",
	esv1.ReasonStoreNotFound:     "create the store, or point the storeRef (name, kind, apiVersion) at a store that exists",
	esv1.ReasonStoreNotReady:     "the store's Ready condition is False: fix the store (see its link), or set its gatingPolicy to Disabled to sync anyway",
	esv1.ReasonStoreNotAllowed:   "the ClusterSecretStore's spec.conditions do not admit this namespace (or the store refuses it): add the namespace there, or use another store",
	esv1.ReasonProviderError:     "the store's provider configuration is missing or invalid: fix it (see the store's link)",
	esv1.ReasonSecretNotFound:    "the provider has no secret (or property) of that key: fix remoteRef.key/property, or create the secret in the provider",
	esv1.ReasonTargetConflict:    "another ExternalSecret (or someone else) owns the target Secret: pick another spec.target.name, or use creationPolicy Merge",
	esv1.ReasonTargetImmutable:   "the target Secret is immutable: delete it so eso writes it anew, or set spec.target.immutable to false",
	esv1.ReasonTemplateError:     "fix spec.target.template (or the templateFrom source it names)",
	esv1.ReasonUnsupportedStore:  "this eso cannot serve the store: fix the storeRef's apiVersion, or run an eso built with the store's provider (`eso providers`)",
	esv1.ReasonInvalidSpec:       "the stored spec does not decode: fix or recreate the ExternalSecret",
}

// pushSecretHints say what to change for each reason of a PushSecret's
// Ready condition.
var pushSecretHints = map[string]string{
	esv1alpha1.ReasonSynced:         "",
	esv1alpha1.ReasonErrored:        "a push or deletion failed where the message says: fix the store it names, or the source Secret's keys",
	esv1alpha1.ReasonSourceDeleted:  "the source Secret is gone: create it again, or delete the PushSecret",
	esv1alpha1.ReasonNotOwned:       "a remote secret exists that eso did not create: set adoptionPolicy Adopt to take it over, or push to another remoteKey",
	esv1alpha1.ReasonRefusedByStore: "the store's pushPolicy refuses this push (adoption, deletion or a remote key outside the namespace's prefix): change the PushSecret, or ask the store's admin",
	esv1alpha1.ReasonLoopRefused:    "the source Secret is written by an ExternalSecret from a store this PushSecret pushes to: push to another store",
	esv1alpha1.ReasonInvalidSpec:    "the stored spec does not decode: fix or recreate the PushSecret",
}

// hint is what to change for reason, from hints; a reason without an entry
// gets a pointer to the message.
func hint(hints map[string]string, reason string) string {
	if h, ok := hints[reason]; ok {
		return h
	}
	if reason == "" {
		return "eso has not acted on it yet: is eso running, and does its --controller-class match?"
	}
	return "see the condition's message (reason " + reason + ")"
}
