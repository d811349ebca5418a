package wire

import (
	esv1 "github.com/eso-dev/eso/apis/externalsecrets/v1"
	providerv1 "github.com/eso-dev/eso/apis/proto/provider/v1"
	"github.com/eso-dev/eso/providers/plugin"
)

// ProtocolMajor is the protocol major this build speaks, and ProtocolMinor
// counts its additive changes.
const (
	ProtocolMajor uint32 = 1
	ProtocolMinor uint32 = 1
)

// ToTarget is the protocol form of a configuration and scope.
func ToTarget(ref plugin.Ref, scope plugin.Scope) *providerv1.Target {
	return &providerv1.Target{Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace, CredentialsNamespace: scope.Namespace}
}

// FromTarget is the contract form of a Target.
func FromTarget(t *providerv1.Target) (plugin.Ref, plugin.Scope) {
	if t == nil {
		return plugin.Ref{}, plugin.Scope{}
	}
	return plugin.Ref{Kind: t.Kind, Name: t.Name, Namespace: t.Namespace}, plugin.Scope{Namespace: t.CredentialsNamespace}
}

// ToRemoteRef is the protocol form of a remoteRef.
func ToRemoteRef(r esv1.ExternalSecretDataRemoteRef) *providerv1.RemoteRef {
	return &providerv1.RemoteRef{
		Key: r.Key, Property: r.Property, Version: r.Version,
		MetadataPolicy:     string(r.MetadataPolicy),
		ConversionStrategy: string(r.ConversionStrategy),
		DecodingStrategy:   string(r.DecodingStrategy),
		NullBytePolicy:     string(r.NullBytePolicy),
	}
}

// FromRemoteRef is the contract form of a RemoteRef.
func FromRemoteRef(r *providerv1.RemoteRef) esv1.ExternalSecretDataRemoteRef {
	if r == nil {
		return esv1.ExternalSecretDataRemoteRef{}
	}
	return esv1.ExternalSecretDataRemoteRef{
		Key: r.Key, Property: r.Property, Version: r.Version,
		MetadataPolicy:     esv1.MetadataPolicy(r.MetadataPolicy),
		ConversionStrategy: esv1.ConversionStrategy(r.ConversionStrategy),
		DecodingStrategy:   esv1.DecodingStrategy(r.DecodingStrategy),
		NullBytePolicy:     esv1.NullBytePolicy(r.NullBytePolicy),
	}
}

// ToFind is the protocol form of a find.
func ToFind(f esv1.ExternalSecretFind) *providerv1.Find {
	out := &providerv1.Find{Path: f.Path, Tags: f.Tags,
		ConversionStrategy: string(f.ConversionStrategy), DecodingStrategy: string(f.DecodingStrategy)}
	if f.Name != nil {
		out.NameRegexp = &f.Name.RegExp
	}
	return out
}

// FromFind is the contract form of a Find.
func FromFind(f *providerv1.Find) esv1.ExternalSecretFind {
	if f == nil {
		return esv1.ExternalSecretFind{}
	}
	out := esv1.ExternalSecretFind{Path: f.Path, Tags: f.Tags,
		ConversionStrategy: esv1.ConversionStrategy(f.ConversionStrategy), DecodingStrategy: esv1.DecodingStrategy(f.DecodingStrategy)}
	if f.NameRegexp != nil {
		out.Name = &esv1.FindName{RegExp: *f.NameRegexp}
	}
	return out
}
