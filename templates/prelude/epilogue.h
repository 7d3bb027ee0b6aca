/* kforge prelude, the part every backend shares: the fused epilogue.
 * prelude_text() appends this file to opencl.h, cuda.h and hip.h, which
 * define what it reads: KF_INLINE, KF_ERF and KF_EXP (float -> float).
 * Reference: docs/prelude.md. */
#ifndef KF_EPILOGUE_H
#define KF_EPILOGUE_H

/* Activations by name; the values are generator/problem.hpp's Activation,
 * which the generator writes as KF_ACTIVATION. Compare against these names. */
#define KF_ACTIVATION_NONE 0
#define KF_ACTIVATION_RELU 1
#define KF_ACTIVATION_GELU 2
#define KF_ACTIVATION_SILU 3

/* The generator defines both per problem; alone, a template gets neither. */
#ifndef KF_BIAS
#define KF_BIAS 0 /* 1: add bias[n] before the activation */
#endif
#ifndef KF_ACTIVATION
#define KF_ACTIVATION KF_ACTIVATION_NONE
#endif

/* The activation KF_ACTIVATION selects; NaN propagates through every one. */
KF_INLINE float kf_activation(float x) {
#if KF_ACTIVATION == KF_ACTIVATION_RELU
  return x < 0.0f ? 0.0f : x;
#elif KF_ACTIVATION == KF_ACTIVATION_GELU /* the erf form */
  return 0.5f * x * (1.0f + KF_ERF(x * 0.70710678118654752440f));
#elif KF_ACTIVATION == KF_ACTIVATION_SILU
  return x / (1.0f + KF_EXP(-x));
#else
  return x;
#endif
}

#endif /* KF_EPILOGUE_H */
