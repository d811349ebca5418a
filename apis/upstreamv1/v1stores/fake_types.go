package v1stores

// FakeProvider configures a store that serves fixed data, for tests and demos.
type FakeProvider struct {
	// Data is what the store serves.
	// +kubebuilder:validation:MaxItems=1000
	Data []FakeProviderData `json:"data"`

	// ValidationResult is what validating the store reports: 0 Ready,
	// 1 Unknown, 2 Error.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2
	// +optional
	ValidationResult *ValidationResult `json:"validationResult,omitempty"`
}

// FakeProviderData is one remote secret of a fake store.
type FakeProviderData struct {
	// Key is the remote key.
	// +kubebuilder:validation:MaxLength=2048
	Key string `json:"key"`

	// Value is the secret's value.
	// +kubebuilder:validation:MaxLength=65536
	Value string `json:"value"`

	// Version is the version the value is served for; empty matches any.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Version string `json:"version,omitempty"`
}

// ValidationResult is the outcome a fake store's validation reports.
type ValidationResult int32

// Validation results.
const (
	ValidationResultReady   ValidationResult = 0
	ValidationResultUnknown ValidationResult = 1
	ValidationResultError   ValidationResult = 2
)
