// Package plugin is the contract between eso's core and its plugins: the
// providers that read and write secrets and the generators that produce
// values (passwords, UUIDs, short-lived cloud tokens, dynamic credentials).
//
// It holds what both sides must agree on and nothing else: the interfaces
// (Provider, SecretsClient, Writer, Generator), the request boundary (Ref,
// Scope), the errors core classifies (Class), the bounds on what a plugin
// returns, and Definition, the one way a plugin is written, in this tree or
// outside it through package sdk. The same interfaces are served in process
// and, in provider mode, over gRPC.
//
// It sits below every provider and generator package and imports none of
// them, nor anything of app: core depends on it, never on a provider SDK.
package plugin
