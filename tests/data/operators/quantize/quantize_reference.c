/* The quantize reference for the declared-operator tests, in double,
 * through the C ABI of kforge_reference.h: q is exact, h the unrounded
 * value (the tolerance allows half an f16 ulp). */
#include "kforge_reference.h"

#include <math.h>
#include <string.h>

static kforge_ref_arg* find(kforge_ref_problem* p, const char* name) {
  for (int i = 0; i < p->nargs; ++i) {
    if (strcmp(p->args[i].name, name) == 0) return &p->args[i];
  }
  return 0;
}

int quantize_reference(kforge_ref_problem* p) {
  if (p->abi_version != KFORGE_REFERENCE_ABI_VERSION) return 1;
  kforge_ref_arg *s = find(p, "inv_scale"), *perm = find(p, "perm"), *x = find(p, "x");
  kforge_ref_arg *q = find(p, "q"), *h = find(p, "h");
  if (!s || !perm || !x || !q || !h || strcmp(q->dtype, "i8") != 0) return 2;
  const uint64_t n = x->count;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t j = perm->data[i] < (double)(n - 1) ? (uint64_t)perm->data[i] : n - 1;
    const double v = x->data[j], scaled = fmin(fmax(v * s->value, -127.0), 127.0);
    q->data[i] = nearbyint(scaled);
    h->data[i] = v;
  }
  return 0;
}
