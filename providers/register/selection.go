// Package register is the one place that decides, by build tag, which
// providers and generators are compiled into the binary.
//
// The rule: providers that need no third-party SDK (kubernetes, fake) are
// always in. Each SDK-backed provider has a tag (aws, gcp, vault). A build with
// no selection tag gets every provider; a build with any selection tag gets
// exactly the tagged ones; the tag "minimal" selects none of them.
//
// Each SDK-backed provider has one file here, e.g. aws.go, whose constraint is
// SelectionConstraint("aws"); selection_test.go keeps every file in line.
package register

import (
	"go.uber.org/fx"
	"slices"
	"strings"

	"github.com/eso-dev/eso/generators"
	"github.com/eso-dev/eso/generators/password"
	"github.com/eso-dev/eso/generators/uuid"
	"github.com/eso-dev/eso/providers"
	"github.com/eso-dev/eso/providers/fake"
	"github.com/eso-dev/eso/providers/kubernetes"
)

// SelectionTags are the build tags that select SDK-backed providers and
// generators. "minimal" selects none of them.
var SelectionTags = []string{"aws", "gcp", "vault", "minimal"}

// SelectionConstraint is the build constraint of the file wiring the SDK-backed
// component with tag: selected explicitly, or by default when no tag is given.
func SelectionConstraint(tag string) string {
	var others []string
	for _, t := range SelectionTags {
		if t != tag {
			others = append(others, t)
		}
	}
	return tag + " || !(" + strings.Join(others, " || ") + ")"
}

// sdkProviders and sdkGenerators are filled by the build-tagged files of
// this package.
var (
	sdkProviders  []providers.Registration
	sdkGenerators []generators.Registration
)

// Providers lists every provider compiled into this binary.
func Providers() []providers.Registration {
	builtin := []providers.Registration{fake.Registration, kubernetes.Registration}
	return append(builtin, sdkProviders...)
}

// Generators lists every generator compiled into this binary.
func Generators() []generators.Registration {
	builtin := []generators.Registration{password.Registration, uuid.Registration}
	return append(builtin, sdkGenerators...)
}

// selected is filled by the build-tagged files: the selection tags in effect.
var selected []string

// Selection names the SDK selection this binary was built with, e.g.
// "aws,gcp,vault" or "minimal" when none was selected.
func Selection() string {
	if len(selected) == 0 {
		return "minimal"
	}
	sorted := slices.Clone(selected)
	slices.Sort(sorted)
	return strings.Join(sorted, ",")
}

// Module adds every compiled-in provider to the fx value group "providers"
// and every generator to "generators".
func Module() fx.Option {
	var opts []fx.Option
	for _, r := range Providers() {
		opts = append(opts, fx.Provide(fx.Annotate(
			func() providers.Registration { return r },
			fx.ResultTags(`group:"providers"`),
		)))
	}
	for _, r := range Generators() {
		opts = append(opts, fx.Provide(fx.Annotate(
			func() generators.Registration { return r },
			fx.ResultTags(`group:"generators"`),
		)))
	}
	return fx.Module("providers", opts...)
}
