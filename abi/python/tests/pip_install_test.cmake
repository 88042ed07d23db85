# ctest python_pip_install: `pip install abi/python` in a fresh virtual environment against this build's installed
# library (the CMAKE_PREFIX_PATH path: nothing is recompiled), then the package used from another folder with
# RH_LIBRARY unset, so the library it loads is the copy inside the installed package. pip fetches scikit-build-core
# from PyPI unless the system has it; NumPy and scikit-learn come from the system (--system-site-packages).
# With -DFROM_SOURCE=ON (ctest python_pip_build, label python-build: not in CI, it compiles the whole library) no
# library is installed first, so pip builds it from the repository.
# -D: BUILD_DIR, WORK_DIR, SOURCE_DIR (abi/python), PYTHON, Kokkos_DIR, [FROM_SOURCE]
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/elsewhere)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " text)
    message(FATAL_ERROR "failed (${rc}): ${text}")
  endif()
endfunction()
if(NOT FROM_SOURCE)
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  set(ENV{CMAKE_PREFIX_PATH} ${WORK_DIR}/prefix)
endif()
run(${PYTHON} -m venv --system-site-packages ${WORK_DIR}/venv)
set(ENV{Kokkos_DIR} ${Kokkos_DIR})
unset(ENV{RH_LIBRARY})
# Where the system already has scikit-build-core (a machine with its dependencies and no network), pip builds
# without fetching it.
execute_process(COMMAND ${WORK_DIR}/venv/bin/python -c "import scikit_build_core" RESULT_VARIABLE no_backend
                OUTPUT_QUIET ERROR_QUIET)
set(isolation "")
if(no_backend EQUAL 0)
  set(isolation --no-build-isolation)
endif()
run(${WORK_DIR}/venv/bin/python -m pip install --quiet --disable-pip-version-check ${isolation} ${SOURCE_DIR})
file(WRITE ${WORK_DIR}/elsewhere/use.py [=[
import os, sys
import numpy as np
import renewable_huber_kokkos as rk
from renewable_huber_kokkos import _lib
lib = _lib.library()
package = os.path.dirname(os.path.realpath(rk.__file__))
assert os.path.realpath(lib.path).startswith(package + os.sep), (lib.path, package)
assert package.startswith(os.path.realpath(sys.prefix)), (package, sys.prefix)  # the installed copy, not the source
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 3))
model = rk.RenewableHuberRegressor().fit(X, X @ [1.0, -2.0, 0.5] + 1.0)
assert np.allclose(model.coef_, [1.0, -2.0, 0.5]) and abs(model.intercept_ - 1.0) < 1e-6, model.coef_
print(f"renewable-huber-kokkos {rk.__version__} on library {rk.library_version()} at {lib.path}: ok")
]=])
execute_process(COMMAND ${WORK_DIR}/venv/bin/python use.py WORKING_DIRECTORY ${WORK_DIR}/elsewhere
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed package failed (${rc})")
endif()
