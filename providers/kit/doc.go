// Package kit holds what providers share, so that a provider's package
// holds only what is its own: its configuration, how it connects, and the
// few calls that differ between backends.
//
//   - Definition turns a configuration type and two functions into a
//     providers.Registration (reading the configuration, Kind, Validate).
//   - JSONValues serves GetSecret and GetSecretMap for a backend that reads
//     a whole value by key and version: property extraction, field maps,
//     metadataPolicy Fetch.
//   - Deletion is DeleteSecret for a backend of JSON-object secrets: only
//     secrets eso manages, one property or the whole secret.
package kit
