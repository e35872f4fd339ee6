#pragma once
// BLAS and LAPACK (OpenBLAS), for the few dense problems telar hands to them: the adaptation's
// LU solves (adapt/dense_lu) and `telar prof matmul`'s dgemm. OpenBLAS is reached through the
// module libtelar_blas.so (core/module.hpp), loaded on the first call, so that commands that
// never call it do not pay for loading it (about 2 ms of every start-up). Each function throws
// telar::Error when the module does not load.
namespace telar::blas {

// LAPACK dgetrf: LU factorisation with partial pivoting of the column-major n x n matrix `a`
// in place; `pivots` gets n entries. Returns LAPACK's info (0, or i > 0 where U(i,i) is zero,
// or -i for a bad argument i).
int dgetrf(int n, double* a, int* pivots);

// LAPACK dgetrs: solves op(A)·x = b with dgetrf's factors (`trans` 'N' or 'T'), b of n values
// overwritten by x. Returns LAPACK's info.
int dgetrs(char trans, int n, const double* a, const int* pivots, double* b);

// C = A·B for row-major n x n matrices (CBLAS dgemm).
void dgemm(const double* a, const double* b, double* c, int n);

}  // namespace telar::blas
