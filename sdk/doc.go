// Package sdk is eso's public, stable surface for providers written outside
// eso's tree: a home-grown secret store becomes an eso provider process
// without forking eso.
//
// A provider implements Client (reads) and, when the store can, Lister
// (find) and Writer (PushSecret, DeleteSecret, SecretExists); describes its
// configuration with a Go type for the spec of a namespaced custom resource
// in provider.secretstore.external-secrets.io/v2alpha1; and calls Main (or
// Serve). It then speaks eso's provider protocol (eso.provider.v1) exactly as
// `eso --mode=provider` does, because it is the same server: handshake,
// grpc.health.v1, mTLS with certificate reloading, per-call authorization
// by the caller's certificate (core may act for every namespace, any other
// caller only for the namespaces its certificate names), message and time
// bounds, metrics, probes and graceful shutdown.
//
// The kit supplies what every store would otherwise write again: JSON
// properties and field maps of a value, the find's name, path and size
// bounds, read-merge-write of one property, the rule that writes never
// touch what eso did not create, and credentials read only from the
// namespace a request may use.
//
// The conformance suite (github.com/eso-dev/eso/tests/conformance) is a
// library: a provider's own tests run it against its server with
// conformance.Remote. examples/provider-inmemory is a complete provider in
// its own Go module.
//
// Underneath, sdk/server is the provider server and sdk/logging the log
// setup, both shared with eso's own binary; sdk depends on nothing in eso's
// app/, so no change there can break a provider built with it.
//
// Compatibility: this package follows semantic versioning with eso's
// releases; the wire protocol underneath changes additively only.
package sdk
