/* The saxpy reference for the declared-operator tests, in double, through
 * the C ABI of kforge_reference.h. */
#include "kforge_reference.h"

#include <string.h>

static kforge_ref_arg* find(kforge_ref_problem* p, const char* name) {
  for (int i = 0; i < p->nargs; ++i) {
    if (strcmp(p->args[i].name, name) == 0) return &p->args[i];
  }
  return 0;
}

int saxpy_reference(kforge_ref_problem* p) {
  if (p->abi_version != KFORGE_REFERENCE_ABI_VERSION) return 1;
  kforge_ref_arg *a = find(p, "a"), *x = find(p, "x"), *y = find(p, "y");
  if (!a || !x || !y || x->count != y->count) return 2;
  for (uint64_t i = 0; i < y->count; ++i) y->data[i] = a->value * x->data[i] + y->data[i];
  return 0;
}

/* A reference that crashes: the tests' operator with reference.symbol
 * "crashing_reference" must cost only its run. */
int crashing_reference(kforge_ref_problem* p) {
  volatile int* nowhere = 0;
  (void)p;
  return *nowhere;
}

/* A reference that never returns: the tests' operator with reference.symbol
 * "hanging_reference" must fail its tune within --reference-timeout. */
int hanging_reference(kforge_ref_problem* p) {
  volatile int forever = 1;
  (void)p;
  while (forever) {
  }
  return 0;
}
