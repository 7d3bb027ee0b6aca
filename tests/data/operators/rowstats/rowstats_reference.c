/* The rowstats reference for the declared-operator tests, in double. */
#include "kforge_reference.h"

#include <string.h>

static kforge_ref_arg* find(kforge_ref_problem* p, const char* name) {
  for (int i = 0; i < p->nargs; ++i) {
    if (strcmp(p->args[i].name, name) == 0) return &p->args[i];
  }
  return 0;
}

int rowstats_reference(kforge_ref_problem* p) {
  kforge_ref_arg *s = find(p, "s"), *x = find(p, "x"), *scaled = find(p, "scaled"), *rowsum = find(p, "rowsum");
  if (!s || !x || !scaled || !rowsum || rowsum->count == 0) return 1;
  const uint64_t cols = x->count / rowsum->count;
  for (uint64_t r = 0; r < rowsum->count; ++r) {
    double sum = 0.0;
    for (uint64_t c = 0; c < cols; ++c) {
      scaled->data[r * cols + c] = s->value * x->data[r * cols + c];
      sum += x->data[r * cols + c];
    }
    rowsum->data[r] = sum;
  }
  return 0;
}
