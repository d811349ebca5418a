//go:build race

package secrettemplate

// raceSlowdown scales the render's time bound in race-detector builds,
// which only tests make: the detector slows CPU-bound functions (bcrypt,
// RSA, PKCS#12) many times over (one bcrypt line: 66 ms without it, 1.2 s
// with it), and a test on a busy machine must measure the template, not
// the instrumentation. At 10 a template with a few such calls stays
// within the bound with the machine's other tests running beside it.
const raceSlowdown = 10
