package providermode

// The permissions `eso --mode=provider` needs: `make generate` turns these
// markers into charts/eso-provider/files/rbac/role.yaml, the ClusterRole
// the provider chart binds its ServiceAccount to. A provider process reads
// what core would read in process, and writes nothing but ServiceAccount
// tokens it logs in with.

// The provider and generator configurations it serves, read by name:
// zz_generated.rbac.go, from the catalog.
// Credentials and Vault CA bundles; list for the Kubernetes provider's find
// with the process's own identity.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
// ServiceAccount-based provider auth and GCP workload identity.
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get
// +kubebuilder:rbac:groups="",resources=serviceaccounts/token,verbs=create
