// Package catalog is the one list of the providers and generators eso can be
// built with, and of the build tags that select them. Everything else that
// depends on that list is generated from it by `make generate` (build/wiring
// writes the wiring in app/wiring and the RBAC markers of core and of the
// provider process), derived from it at run time, or iterates over it
// (build/sizes.sh, the selection, import, build-tag and RBAC tests); a test
// fails when a generated file is out of date.
//
// Adding a provider is its folder, its configuration type in
// apis/providers/v2alpha1, one line in Providers and `make generate`; a
// provider needing an SDK no other provider links also adds its tag to Tags.
package catalog

import "slices"

// Module is eso's Go module path; component packages are relative to it.
const Module = "github.com/eso-dev/eso"

// Tag is a build tag that selects the SDK-backed components carrying it. A
// build with no selection tag gets every component; a build with any gets
// exactly the tagged ones; Minimal selects none.
type Tag struct {
	Name string
	// Modules are the third-party module path prefixes only components with
	// this tag may link, so tests can tell whether the SDK is in a binary.
	Modules []string
}

// Minimal is the selection tag that selects no SDK-backed component.
const Minimal = "minimal"

// Tags lists the SDK selection tags.
var Tags = []Tag{
	{Name: "aws", Modules: []string{"github.com/aws/aws-sdk-go-v2"}},
	{Name: "gcp", Modules: []string{"cloud.google.com/go/", "google.golang.org/api/"}},
	{Name: "vault", Modules: []string{"github.com/hashicorp/vault/"}},
}

// Component is one provider or generator package. It exports a variable
// Registration (a plugin.Registration) serving Kind.
type Component struct {
	// Package is the import path relative to Module, e.g. "providers/fake".
	Package string
	// Kind is the configuration kind it serves, e.g. "Fake": what eso's
	// roles grant and a migration reads.
	Kind string
	// Tag selects it at build time; empty means always compiled in (no
	// third-party SDK).
	Tag string
}

// Providers are the secret store providers, in the order they are listed.
var Providers = []Component{
	{Package: "providers/fake", Kind: "Fake"},
	{Package: "providers/kubernetes", Kind: "Kubernetes"},
	{Package: "providers/aws/secretsmanager", Kind: "AWSSecretManager", Tag: "aws"},
	{Package: "providers/aws/parameterstore", Kind: "AWSParameterStore", Tag: "aws"},
	{Package: "providers/gcp/secretmanager", Kind: "GCPSecretManager", Tag: "gcp"},
	{Package: "providers/vault", Kind: "Vault", Tag: "vault"},
}

// Generators are the generators, in the order they are listed.
var Generators = []Component{
	{Package: "generators/password", Kind: "Password"},
	{Package: "generators/uuid", Kind: "UUID"},
	{Package: "generators/sshkey", Kind: "SSHKey"},
	{Package: "generators/fake", Kind: "Fake"},
	{Package: "generators/mfa", Kind: "MFA"},
	{Package: "generators/aws/ecr", Kind: "ECRAuthorizationToken", Tag: "aws"},
	{Package: "generators/aws/sts", Kind: "STSSessionToken", Tag: "aws"},
	{Package: "generators/gcp/gcr", Kind: "GCRAccessToken", Tag: "gcp"},
	{Package: "generators/vault", Kind: "VaultDynamicSecret", Tag: "vault"},
}

// ImportPath is c's full import path.
func (c Component) ImportPath() string { return Module + "/" + c.Package }

// TagNames are the SDK selection tags' names, in the order of Tags.
func TagNames() []string {
	names := make([]string, len(Tags))
	for i, t := range Tags {
		names[i] = t.Name
	}
	return names
}

// SelectionTags are every tag that selects components: the SDK tags and
// Minimal.
func SelectionTags() []string { return append(TagNames(), Minimal) }

// Selected reports which SDK tags a build with buildTags compiles in: all of
// them when no selection tag is set, else exactly those set.
func Selected(buildTags []string) []string {
	anySelection := false
	for _, t := range SelectionTags() {
		anySelection = anySelection || slices.Contains(buildTags, t)
	}
	var out []string
	for _, t := range TagNames() {
		if !anySelection || slices.Contains(buildTags, t) {
			out = append(out, t)
		}
	}
	return out
}

// Groups of the configuration kinds: a provider's in ProviderGroup, a
// generator's in GeneratorGroup.
const (
	ProviderGroup  = "provider.secretstore.external-secrets.io"
	GeneratorGroup = "provider.generator.external-secrets.io"
)

// Components are Providers and Generators together.
func Components() []Component { return slices.Concat(Providers, Generators) }
