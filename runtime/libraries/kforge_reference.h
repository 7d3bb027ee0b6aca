/* The C ABI of a declared operator's host reference (docs/user-operators.md).
 *
 * A shared library exports one function of type kforge_reference_fn (named
 * by operator.json's reference.symbol, "kforge_reference" by default). kforge
 * loads it in its worker process, so a reference that crashes costs only
 * that run, and calls it twice per validation run on the same inputs: the
 * two answers must agree bit for bit. Every buffer arrives as doubles: an
 * input holds exactly the values the kernel reads (rounded to its dtype), an
 * inout output its initial values, an out output NaN (in every dtype); the
 * reference writes every element of every output in double precision,
 * integers as integral values. */
#ifndef KFORGE_REFERENCE_H
#define KFORGE_REFERENCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bump when a struct below changes; kforge passes the version it speaks. */
#define KFORGE_REFERENCE_ABI_VERSION 1

enum kforge_ref_type { KFORGE_REF_BUFFER = 0, KFORGE_REF_I32 = 1, KFORGE_REF_F32 = 2 };
enum kforge_ref_role { KFORGE_REF_IN = 0, KFORGE_REF_OUT = 1, KFORGE_REF_INOUT = 2 };

typedef struct kforge_ref_dim {
  const char* name;
  int64_t value;
} kforge_ref_dim;

typedef struct kforge_ref_arg {
  const char* name;  /* as declared */
  int type;          /* enum kforge_ref_type */
  int role;          /* enum kforge_ref_role; KFORGE_REF_IN for scalars */
  const char* dtype; /* the element type: "f32", "f16", "bf16", "f64", "i32", "i8", "u8" */
  uint64_t count;    /* elements of a buffer; 0 for a scalar */
  double* data;      /* a buffer's elements; NULL for a scalar */
  double value;      /* a scalar's value */
} kforge_ref_arg;

typedef struct kforge_ref_problem {
  int abi_version;   /* KFORGE_REFERENCE_ABI_VERSION */
  const char* op;    /* the operator's name */
  const char* dtype; /* the problem's dtype */
  int ndims;
  const kforge_ref_dim* dims; /* every dimension, sorted by name */
  int nargs;
  kforge_ref_arg* args; /* every kernel argument, in declared order */
} kforge_ref_problem;

/* 0 on success; any other value fails the run, and kforge reports it. */
typedef int (*kforge_reference_fn)(kforge_ref_problem* problem);

#ifdef __cplusplus
}
#endif

#endif /* KFORGE_REFERENCE_H */
