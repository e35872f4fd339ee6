#pragma once
// Dense LU factorisation with partial pivoting (LAPACK's dgetrf, from OpenBLAS), for the two
// small dense problems of adaptation: the look-up table's RBF fits (a solve, as scipy's Rbf
// makes it: the reference's refits are not to be slowed by a lesser solver) and NAS-WOT's
// log-determinant.
#include <cstddef>
#include <vector>

namespace telar::adapt {

// Solves a·x = b (row-major n x n); throws telar::Error for a singular system.
std::vector<double> solve_dense(std::vector<double> a, std::vector<double> b);

// log |det a| of a row-major n x n matrix; -infinity for a singular one.
double log_abs_determinant(std::vector<double> a, std::size_t n);

}  // namespace telar::adapt
