/* Names of the failure kinds (see hm_fail.h). */
#include "base/hm_fail.h"

static const char *const fail_names[HM_FAIL__COUNT] = {
    "none", "connect", "timeout", "reset", "closed", "protocol", "tls", "other",
};

const char *hm_fail_kind_name(hm_fail_kind k)
{
    return (unsigned)k < HM_FAIL__COUNT ? fail_names[k] : "other";
}

const char *hm_tls_fail_name(hm_tls_fail f)
{
    switch (f) {
    case HM_TLS_VERIFY:
        return "tls_verify";
    case HM_TLS_HANDSHAKE:
        return "tls_handshake";
    case HM_TLS_EOF:
        return "tls_eof";
    case HM_TLS_PROTOCOL:
        return "tls_protocol";
    default:
        return "none";
    }
}
