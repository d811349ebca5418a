package awsauth

import (
	"testing"

	genv1 "github.com/eso-dev/eso/apis/generatorproviders/v2alpha1"
	provv1 "github.com/eso-dev/eso/apis/providers/v2alpha1"
)

// TestGeneratorWithBothAuthsUsesSecretRef: a generator naming secretRef and
// jwt, as upstream's documentation writes one, authenticates with
// secretRef, as upstream's generators do; one alone is kept as it is.
func TestGeneratorWithBothAuthsUsesSecretRef(t *testing.T) {
	keys := &provv1.AWSAuthSecretRef{AccessKeyID: provv1.SecretKeySelector{Name: "aws", Key: "id"}}
	jwt := &provv1.AWSJWTAuth{ServiceAccountRef: provv1.KubernetesServiceAccount{Name: "puller"}}
	both := GeneratorSpec(&genv1.AWSGeneratorSpec{Region: "eu-west-1", Role: "r", Auth: &provv1.AWSAuth{SecretRef: keys, JWT: jwt}})
	if both.Auth.SecretRef != keys || both.Auth.JWT != nil {
		t.Errorf("both: auth %+v, want secretRef alone", both.Auth)
	}
	if only := GeneratorSpec(&genv1.AWSGeneratorSpec{Region: "eu-west-1", Role: "r", Auth: &provv1.AWSAuth{JWT: jwt}}); only.Auth.JWT != jwt {
		t.Errorf("jwt alone: auth %+v", only.Auth)
	}
}
