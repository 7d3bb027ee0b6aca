/* The stencil5 reference for the declared-operator tests, in double, through
 * the C ABI of kforge_reference.h: the same 5-point rule over the haloed input. */
#include "kforge_reference.h"

#include <string.h>

static kforge_ref_arg* find(kforge_ref_problem* p, const char* name) {
  for (int i = 0; i < p->nargs; ++i) {
    if (strcmp(p->args[i].name, name) == 0) return &p->args[i];
  }
  return 0;
}

int stencil5_reference(kforge_ref_problem* p) {
  if (p->abi_version != KFORGE_REFERENCE_ABI_VERSION) return 1;
  kforge_ref_arg *h = find(p, "H"), *w = find(p, "W"), *x = find(p, "X"), *y = find(p, "Y");
  if (!h || !w || !x || !y) return 2;
  const uint64_t rows = (uint64_t)h->value, cols = (uint64_t)w->value, pitch = cols + 2;
  if (x->count != (rows + 2) * pitch || y->count != rows * cols) return 3;
  for (uint64_t i = 0; i < rows; ++i) {
    for (uint64_t j = 0; j < cols; ++j) {
      const uint64_t c = (i + 1) * pitch + (j + 1);
      const double around = x->data[c - pitch] + x->data[c + pitch] + x->data[c - 1] + x->data[c + 1];
      y->data[i * cols + j] = 0.5 * x->data[c] - 0.125 * around;
    }
  }
  return 0;
}
