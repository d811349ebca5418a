// Package kit holds what providers share, so that a provider's package
// holds only what is its own: its configuration, how it connects, and the
// few calls that differ between backends. It builds on the contract in
// providers/plugin and links no provider SDK, so core and sdk may use it.
//
//   - JSONValues serves GetSecret and GetSecretMap for a backend that reads
//     a whole value by key and version: property extraction, field maps,
//     metadataPolicy Fetch.
//   - Deletion is DeleteSecret for a backend of JSON-object secrets: only
//     secrets eso manages, one property or the whole secret.
//   - Property, FieldMap and SetProperty read and edit JSON values the way
//     upstream's remoteRef.property does.
//   - FindBudget and LimitResponses bound what a find and an HTTP backend
//     return; CredentialValue, ReadKeyPair, TrustedCA and
//     ServiceAccountToken resolve credentials, client certificates, CA
//     bundles and ServiceAccount tokens in the request's namespace only;
//     KeyedMutex serialises writes of one key.
package kit
