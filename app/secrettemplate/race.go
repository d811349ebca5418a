//go:build race

package secrettemplate

// raceSlowdown scales the render's time bound in race-detector builds,
// which only tests make: the detector slows CPU-bound functions (bcrypt,
// RSA, PKCS#12) several times over, and a test on a busy machine must
// measure the template, not the instrumentation.
const raceSlowdown = 3
