/* A reference library whose constructor misbehaves as KFORGE_TEST_HOSTILE
 * says (crash, exit), for the tests that check it only ever runs in a
 * process of its own; with the variable unset it is saxpy's reference. */
#include <stdlib.h>
#include <string.h>

#include "kforge_reference.h"

__attribute__((constructor)) static void misbehave(void) {
  const char* how = getenv("KFORGE_TEST_HOSTILE");
  if (!how) return;
  if (strcmp(how, "crash") == 0) {
    volatile int* nowhere = 0;
    *nowhere = 1;
  }
  if (strcmp(how, "exit") == 0) exit(0);
}

int saxpy_reference(kforge_ref_problem* p) {
  (void)p;
  return 0;
}
