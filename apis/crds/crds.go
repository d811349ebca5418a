// Package crds carries the CustomResourceDefinitions a process needs at
// run time: `eso render` applies their schema defaults to manifests read
// from files, as the API server would before the controller sees them.
// The YAML files beside it are written by `make generate`.
package crds

import _ "embed"

// ExternalSecrets is the external-secrets.io ExternalSecret CRD.
//
//go:embed external-secrets.io_externalsecrets.yaml
var ExternalSecrets []byte

// PushSecrets is the external-secrets.io PushSecret CRD.
//
//go:embed external-secrets.io_pushsecrets.yaml
var PushSecrets []byte
