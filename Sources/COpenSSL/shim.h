#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/rsa.h>

/* EVP_PKEY_PUBLIC_KEY is a compound macro that Swift does not import. */
static inline int cv_evp_pkey_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/hmac.h>

/* EVP_PKEY_KEYPAIR is a compound macro that Swift does not import. */
static inline int cv_evp_pkey_keypair_selection(void) { return EVP_PKEY_KEYPAIR; }
