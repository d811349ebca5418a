package manager

// The permissions eso core needs, one rule per reason: `make generate` turns
// these markers into charts/eso/files/rbac/role.yaml, the ClusterRole an install binds
// eso's ServiceAccount to (tests/integration runs eso under it). Nothing
// here is a wildcard, nothing lets eso grant, escalate or impersonate, and
// nothing touches webhooks or CRDs.

// Its own kinds: ExternalSecrets are also written by ClusterExternalSecrets;
// GeneratorStates are created, marked and deleted by rotations.
// +kubebuilder:rbac:groups=external-secrets.io,resources=externalsecrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=external-secrets.io,resources=clusterexternalsecrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=external-secrets.io,resources=externalsecrets/status;clusterexternalsecrets/status,verbs=get;update;patch
// PushSecrets get eso's finalizer while their deletionPolicy is Delete, and
// are written by ClusterPushSecrets.
// +kubebuilder:rbac:groups=external-secrets.io,resources=pushsecrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=external-secrets.io,resources=clusterpushsecrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=external-secrets.io,resources=pushsecrets/status;clusterpushsecrets/status,verbs=get;update;patch
// Children eso creates name their owner with blockOwnerDeletion, which
// clusters enforcing OwnerReferencesPermissionEnforcement allow only to
// whoever may update the owner's finalizers.
// +kubebuilder:rbac:groups=external-secrets.io,resources=externalsecrets/finalizers;pushsecrets/finalizers;clusterexternalsecrets/finalizers;clusterpushsecrets/finalizers,verbs=update
// +kubebuilder:rbac:groups=secretstore.external-secrets.io,resources=secretstores;clustersecretstores,verbs=get;list;watch
// upstream's v1 stores, served by the v1 compatibility layer
// +kubebuilder:rbac:groups=external-secrets.io,resources=secretstores;clustersecretstores,verbs=get;list;watch
// +kubebuilder:rbac:groups=external-secrets.io,resources=secretstores/status;clustersecretstores/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=secretstore.external-secrets.io,resources=secretstores/status;clustersecretstores/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=generator.external-secrets.io,resources=generators;clustergenerators,verbs=get;list;watch
// upstream's generator kinds, served by the v1 compatibility layer
// +kubebuilder:rbac:groups=generators.external-secrets.io,resources=passwords;uuids;ecrauthorizationtokens;stssessiontokens;gcraccesstokens;vaultdynamicsecrets;sshkeys;fakes;mfas;clustergenerators,verbs=get;list;watch
// +kubebuilder:rbac:groups=generator.external-secrets.io,resources=generators/status;clustergenerators/status;generatorstates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=generator.external-secrets.io,resources=generatorstates,verbs=get;list;watch;create;update;patch;delete

// Provider and generator configurations: zz_generated.rbac.go, from the
// catalog.

// Target Secrets in every namespace (the cache watches only those labelled
// as eso's), credential and template Secrets read by name, the key that
// signs GeneratorStates; an awaited credentials Secret is watched by name
// (app/referents). There is no deletecollection.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// templateFrom and Vault caProvider ConfigMaps, read by name; one that is
// awaited is watched by name (app/referents). RBAC cannot narrow a watch to
// a name, so the account could watch every ConfigMap; eso opens only
// name-selected watches, and never lists.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;watch
// ServiceAccount-based provider auth and GCP workload identity.
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get
// +kubebuilder:rbac:groups="",resources=serviceaccounts/token,verbs=create
// Cluster kinds' namespace conditions; clients of deleted namespaces are dropped.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch
// --rollout-restarts: the workloads that ask to be restarted when a Secret
// changes are watched and patched (spec.template's restartedAt annotation,
// as `kubectl rollout restart`). The chart grants this rule only when
// rolloutRestarts.enabled, in the namespaces of its scope.
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;watch;patch
// Leader election; with --shards auto also each replica's membership Lease,
// in the same namespace: the ring is the list of them, a replica creates its
// own at start and deletes it at shutdown, and deletes the Leases of members
// whose Lease has expired.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;create;update;delete
// --metrics-secure: who may scrape.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
