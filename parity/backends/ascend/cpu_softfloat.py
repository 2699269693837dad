"""The soft-float bf16 builtins a lowered module calls, for hosts whose libgcc lacks them.

LLVM lowers bf16 arithmetic and int->bf16 casts on x86 by computing in f32 and calling
`__truncsfbf2` (compiler-rt's and libgcc 13's name) to round back to bf16. Debian 12's libgcc
(gcc 12) has no bf16 builtins, so such a module would fail to load ("undefined symbol:
__truncsfbf2"). This runtime defines them in LLVM IR, built by the same `llc` as the kernel, so
the bf16 calling convention is LLVM's own on both sides. Rounding is IEEE round-to-nearest-even,
NaNs stay NaN (quieted), as compiler-rt's truncsfbf2 and the NPU's vector unit round.

`__truncdfbf2` rounds f64 once (round to odd into f32, then nearest-even into bf16: exact, since
f32 keeps more than twice bf16's 8 bits plus two), for an LLVM that lowers f64->bf16 directly.
"""

from __future__ import annotations

BF16_BUILTINS_LL = r"""
define bfloat @__truncsfbf2(float %x) {
  %bits = bitcast float %x to i32
  %mag = and i32 %bits, 2147483647
  %isnan = icmp ugt i32 %mag, 2139095040
  %lsb = lshr i32 %bits, 16
  %odd = and i32 %lsb, 1
  %bias = add i32 %odd, 32767
  %rounded = add i32 %bits, %bias
  %hi = lshr i32 %rounded, 16
  %quiet = or i32 %lsb, 64
  %pick = select i1 %isnan, i32 %quiet, i32 %hi
  %h = trunc i32 %pick to i16
  %out = bitcast i16 %h to bfloat
  ret bfloat %out
}

define bfloat @__truncdfbf2(double %x) {
  %f = fptrunc double %x to float
  %back = fpext float %f to double
  %isnan = fcmp uno double %x, %x
  %exact = fcmp oeq double %back, %x
  %keep = or i1 %isnan, %exact
  %fbits = bitcast float %f to i32
  %ax = call double @llvm.fabs.f64(double %x)
  %aback = call double @llvm.fabs.f64(double %back)
  %over = fcmp ogt double %aback, %ax
  %down = sub i32 %fbits, 1
  %toward0 = select i1 %over, i32 %down, i32 %fbits
  %odd = or i32 %toward0, 1
  %sticky = select i1 %keep, i32 %fbits, i32 %odd
  %g = bitcast i32 %sticky to float
  %out = call bfloat @__truncsfbf2(float %g)
  ret bfloat %out
}

declare double @llvm.fabs.f64(double)
"""
