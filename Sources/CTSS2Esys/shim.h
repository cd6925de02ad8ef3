// tpm2-tss ESYS with its marshalling (tss2-mu) and response-code decoding (tss2-rc) in one
// module, so that the TPM2B_* types are defined once (two modules would each import them).
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
