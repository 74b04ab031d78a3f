#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

/* The stack helpers of <openssl/safestack.h> are macros, which Swift cannot call. */
static inline STACK_OF(X509) *iaprecon_certificate_stack(void) { return sk_X509_new_null(); }
static inline int iaprecon_certificate_stack_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}
static inline int iaprecon_certificate_stack_count(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *iaprecon_certificate_stack_at(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
static inline void iaprecon_certificate_stack_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }

/* OpenSSL 3 deprecates EC_GROUP_precompute_mult with the rest of its low-level curve calls, yet
   it is still the only way to give a point other than the curve's generator a table of its
   multiples (PrecomputedVerifyKey); the call is confined to this one helper. */
static inline int iaprecon_group_precompute(EC_GROUP *group, BN_CTX *context) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    return EC_GROUP_precompute_mult(group, context);
#pragma clang diagnostic pop
}

/* Deprecated with the rest for the same reason: a point's Jacobian coordinates (X, Y, Z, with
   x = X/Z^2) let PrecomputedVerifyKey compare x with r without the inversion that the affine x costs. */
static inline int iaprecon_point_jacobian(const EC_GROUP *group, const EC_POINT *point, BIGNUM *x, BIGNUM *y, BIGNUM *z,
                                          BN_CTX *context) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    return EC_POINT_get_Jprojective_coordinates_GFp(group, point, x, y, z, context);
#pragma clang diagnostic pop
}
