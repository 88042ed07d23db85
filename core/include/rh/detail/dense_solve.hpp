// Dense solve of the q×q Newton system H d = g (docs/method.md §8), on the execution space, so the system never
// leaves a device.
//
// First choice, when H is meant to be positive definite (ridge > 0): Cholesky H = UᵀU. It runs only on an exactly
// symmetric H (a restored J need not be symmetric), and gives way to LU on a pivot that is not > 0 or a solution
// that is not finite. Then LU with partial pivoting: pivot choice and multipliers follow LAPACK's getrf (first
// largest |a_ik|, l = a_ik / a_kk); like numpy.linalg.solve, the system counts as singular only on an exactly zero
// pivot, and the solution must be finite. Otherwise: the minimum-norm least-squares solution through an SVD with
// cutoff eps·q·σ_max (numpy's lstsq with rcond=None), computed on the host because it is rare and small.
//
// The choice between Cholesky and LU is taken on the space: every kernel reads the SolveReport first, and the
// Cholesky's last launch runs the LU itself when the Cholesky gave way, so the host never waits on the choice and a
// successful Cholesky costs no LU launch.
//
// One file per factorization under dense/.
#pragma once

#include "rh/detail/dense/cholesky.hpp"
#include "rh/detail/dense/lu.hpp"
#include "rh/detail/dense/min_norm.hpp"
#include "rh/detail/dense/symmetry.hpp"
